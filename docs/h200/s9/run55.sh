#!/bin/bash
# Session 9, last call: per-call host time with out= (the headline module, plain calls and
# eager in the same process), then every GPU test on the final code and shipped modules.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r55; mkdir -p $R
( time timeout 150 python3 docs/h200/s9/out_probe.py $R > $R/out_probe.txt 2> $R/out_probe.err ) 2> $R/out_probe.time
cat $R/out_probe.txt; tail -n 3 $R/out_probe.err; grep real $R/out_probe.time
( time MLPGEN_TEST_GPU=1 timeout 400 python3 -m pytest -q -m gpu tests/ -p no:cacheprovider -rf > $R/gpu_tests_all.txt 2>&1 ) 2> $R/gpu_tests_all.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_all.txt | head -20; grep real $R/gpu_tests_all.time
tar czf $OUT/run55.tgz -C /tmp r55
