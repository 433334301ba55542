#!/bin/bash
# Session 16, third call: run120 again, the owner now reading its slots in _quad_slot order: the
# cluster GPU tests on the new kernels, then quad_probe.py against the paired stores before.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r121; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py -k "cluster_kernels" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
( time timeout 400 python3 docs/h200/s16/quad_probe.py $R > $R/probe.txt 2> $R/probe.err ) 2> $R/probe.time
cat $R/probe.txt; tail -n 3 $R/probe.err | cut -c1-300; grep real $R/probe.time
rm -f $R/probe_*.py; tar czf $OUT/run121.tgz -C /tmp r121
