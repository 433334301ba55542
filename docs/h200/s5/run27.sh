#!/bin/bash
# NOT RUN (the session's device time was spent): the next session's first call: the compile tests with a loss whose gradient is not rounding
# noise, then as many of the remaining kernel GPU tests as fit.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
R=/tmp/r27; mkdir -p $R
MLPGEN_TEST_GPU=1 timeout 75 python3 -m pytest -q -m gpu tests/test_gpu_module.py -k "compile" -p no:cacheprovider -rf > $R/gpu_tests_compile.txt 2>&1
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_compile.txt | head -8
MLPGEN_TEST_GPU=1 timeout 80 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py -k "layered or tensor_cores or fast_launch" -p no:cacheprovider -rf > $R/gpu_tests_kernels.txt 2>&1
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_kernels.txt | head -8; tail -c 200 $R/gpu_tests_kernels.txt
tar czf $OUT/run27.tgz -C /tmp r27
