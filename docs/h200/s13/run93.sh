#!/bin/bash
# Session 13: the native lane's GPU tests on the final session-12 code (its state simplification
# and build_native_lane() ran on the CPU only); split's hand-over without the arrival counter
# (split_flag_probe.py); chain at 1024 rows with larger k steps (chain_k_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r93; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_module.py tests/test_native.py > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
timeout 150 python3 docs/h200/s13/split_flag_probe.py $R/flag > $R/flag.log 2>&1; tail -12 $R/flag.log
( time timeout 200 python3 docs/h200/s13/chain_k_probe.py $R/chaink > $R/chaink.txt 2> $R/chaink.err ) 2> $R/chaink.time
cat $R/chaink.txt | head -12; tail -3 $R/chaink.err; grep real $R/chaink.time
tar czf $OUT/run93.tgz -C /tmp r93
