#!/bin/bash
# Session 6, call 1: the compile tests (random-projection loss), every kernel GPU test, and
# torch.compile (default, max-autotune) against the fifth session's headline module at large batches.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r28; mkdir -p $R
MLPGEN_TEST_GPU=1 timeout 80 python3 -m pytest -q -m gpu tests/test_gpu_module.py -k "compile" -p no:cacheprovider -rf > $R/gpu_tests_compile.txt 2>&1
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_compile.txt | head -8
MLPGEN_TEST_GPU=1 timeout 250 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py -p no:cacheprovider -rf > $R/gpu_tests_kernels.txt 2>&1
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_kernels.txt | head -8; tail -c 300 $R/gpu_tests_kernels.txt
( time timeout 170 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --batches 16384,65536,262144 --only eager,compile,max-autotune,mlpgen --budget 150 --json > $R/bench_compile.json 2> $R/bench_compile.txt ) 2> $R/bench_compile.time
grep -v "^\[" $R/bench_compile.txt | tail -n 14; grep real $R/bench_compile.time
tar czf $OUT/run28.tgz -C /tmp r28
