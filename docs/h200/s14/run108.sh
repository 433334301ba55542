#!/bin/bash
# Session 14, eighth call: the final code's GPU tests where it changed after run104 (the native
# lane's clusters, the shipped tables with cluster call cells): the shipped winners, the cluster
# kernels, the module's and the native lane's tests, the tuner's lane test.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r108; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 330 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py tests/test_gpu_module.py tests/test_native.py tests/test_gpu_tune.py -k "shipped or cluster or lane or native or own_kernel or graph or capture" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -20 | cut -c1-300; grep real $R/gpu_tests.time
tar czf $OUT/run108.tgz -C /tmp r108
