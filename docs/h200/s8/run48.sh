#!/bin/bash
# Session 8, last call: every GPU test (kernels, module, tune, profile) on the final code and
# the re-tuned headline module (run47's tune, shipped).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r48; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 560 python3 -m pytest -q -m gpu tests/ -p no:cacheprovider -rf > $R/gpu_tests_all.txt 2>&1 ) 2> $R/gpu_tests_all.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_all.txt | head -20; grep real $R/gpu_tests_all.time
tar czf $OUT/run48.tgz -C /tmp r48
