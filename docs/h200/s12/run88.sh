#!/bin/bash
# Session 12: the tuner's GPU tests with an empty native-lane cache, so that tune_module builds
# the native lane itself before its workers measure (test_retune_end_to_end...).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1 MLPGEN_CACHE=/tmp/r88/cache
R=/tmp/r88; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 300 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_tune.py > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -30; grep real $R/gpu_tests.time
ls -la $R/cache/native | tee $R/native_cache.txt
rm -rf $R/cache; tar czf $OUT/run88.tgz -C /tmp r88
