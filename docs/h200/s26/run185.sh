#!/bin/bash
# Session 26, second call: every GPU test on this session's code (the PDL-pass fix of session 25,
# the rowblock num_stages test comparing PTX without its source-file names).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run185; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 560 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs --durations=8 tests/ > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|ERROR|SKIPPED)|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
cd $OUT && tar czf run185.tgz run185 && rm -rf run185
