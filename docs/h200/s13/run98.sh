#!/bin/bash
# Session 13: the final code and tables: the shipped winners' GPU tests (run97's re-tuned tables),
# the tuner's and the module's GPU tests.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r98; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 330 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_tune.py tests/test_gpu_module.py "tests/test_gpu_kernels.py::test_shipped_winners_for_this_gpu_are_correct" tests/test_gpu_kernels.py::test_large_batch_winners_use_hopper_tensor_cores > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
tar czf $OUT/run98.tgz -C /tmp r98
