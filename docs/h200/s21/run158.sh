#!/bin/bash
# Session 21, last call: the GPU tests that run the shipped modules' winners and the layered and
# epilogue paths (graph capture, torch.compile of a layered config) on the final code, with run157's tables.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r158; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py tests/test_gpu_module.py -k "shipped or layered or epilogue or capture" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
tar czf $OUT/run158.tgz -C /tmp r158
