#!/bin/bash
# Session 6, call 4: every GPU test on the shipped modules (run29's headline, run30's 128^3),
# then torch.compile against the shipped headline at small batches.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r31; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 210 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py -p no:cacheprovider -rf > $R/gpu_tests_kernels.txt 2>&1 ) 2> $R/gpu_tests_kernels.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_kernels.txt | head -10; grep real $R/gpu_tests_kernels.time
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu tests/test_gpu_module.py tests/test_gpu_tune.py -p no:cacheprovider -rf > $R/gpu_tests_module_tune.txt 2>&1 ) 2> $R/gpu_tests_module_tune.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_module_tune.txt | head -10; grep real $R/gpu_tests_module_tune.time
( time timeout 120 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --batches 1,64,1024 --only eager,compile,max-autotune,mlpgen --budget 100 --json > $R/bench_compile_small.json 2> $R/bench_compile_small.txt ) 2> $R/bench_compile_small.time
grep -v "^\[" $R/bench_compile_small.txt | grep -E "^ *(batch|[0-9]+ )|note: mlpgen|per-call|GPU time" | tail -n 14; grep real $R/bench_compile_small.time
tar czf $OUT/run31.tgz -C /tmp r31
