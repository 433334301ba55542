#!/bin/bash
# Session 17, fifth call: the row form's remote stores without replicas
# (docs/h200/s17/dedup_probe.py) against the stores before, 1-64 rows.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r132; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py -k "cluster_kernels" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -8 | cut -c1-300; grep real $R/gpu_tests.time
timeout 300 python3 docs/h200/s17/dedup_probe.py $R > $R/probe.log 2>&1; echo "probe rc $?"
grep -v Warning $R/probe.log | tail -40 | cut -c1-200
tar czf $OUT/run132.tgz -C /tmp r132
