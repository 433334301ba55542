#!/bin/bash
# Session 12: every GPU test (pytest -m gpu) with the native lane in the product code.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r87; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 540 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -30; grep real $R/gpu_tests.time
ls ~/.cache/mlpgen/native > $R/native_cache.txt 2>&1; cat $R/native_cache.txt
tar czf $OUT/run87.tgz -C /tmp r87
