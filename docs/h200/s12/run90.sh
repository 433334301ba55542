#!/bin/bash
# Session 12, after the review: the final code's native lane probe again and the module's GPU
# tests with the shipped-winners test.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1 MLPGEN_CACHE=/tmp/mlpgen_cache
R=/tmp/r90; mkdir -p $R
( time timeout 150 python3 docs/h200/s12/native_probe.py $R > $R/native_probe.txt 2> $R/native_probe.err ) 2> $R/native_probe.time
cat $R/native_probe.txt; tail -n 4 $R/native_probe.err | cut -c1-400; grep real $R/native_probe.time
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_module.py \
    tests/test_gpu_kernels.py::test_shipped_winners_for_this_gpu_are_correct > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
tar czf $OUT/run90.tgz -C /tmp r90
