#!/bin/bash
# Session 22, second call (two H200s): every GPU test on the final code, in two shards side by
# side (the two-GPU test runs in the first, which sees both GPUs); then, on the second GPU,
# chain's host time in the tuner's own measure (tuner_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/run160; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/gpu.txt
( ( time MLPGEN_TEST_GPU=1 timeout 500 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs --durations=8 tests/test_gpu_module.py tests/test_bench.py tests/test_profile.py > $R/gpu_tests_a.txt 2>&1 ) 2> $R/gpu_tests_a.time ) &
( ( time CUDA_VISIBLE_DEVICES=1 MLPGEN_TEST_GPU=1 timeout 500 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs --durations=8 tests/test_gpu_kernels.py tests/test_gpu_tune.py > $R/gpu_tests_b.txt 2>&1 ) 2> $R/gpu_tests_b.time
  ( time CUDA_VISIBLE_DEVICES=1 timeout 120 python3 docs/h200/s22/tuner_probe.py $R > $R/tuner_probe.log 2>&1 ) 2> $R/tuner_probe.time ) &
wait
cat $R/gpu.txt
for s in a b; do grep -E "^(FAILED|SKIPPED|ERROR|E )|passed|failed" $R/gpu_tests_$s.txt | head -12 | cut -c1-300; grep real $R/gpu_tests_$s.time; done
tail -8 $R/tuner_probe.log | cut -c1-220; grep real $R/tuner_probe.time
tar czf $OUT/run160.tgz -C /tmp run160
