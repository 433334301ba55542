#!/bin/bash
# Session 19, fourth call: the shipped headline table (16 rows' CUDA-graph winner judged without
# PDL) -- its GPU tests, the module's GPU tests of lanes and capture, and two benches.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r145; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py tests/test_gpu_module.py -k "linked or shipped or graph or capture or lane" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
for i in 1 2; do
timeout 100 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --no-compile --batches 1,16,64,256,1024 --json > $R/bench$i.json 2> $R/bench$i.txt
grep -A7 "per-call" $R/bench$i.txt | head -8 | cut -c1-200
done
tar czf $OUT/run145.tgz -C /tmp r145
