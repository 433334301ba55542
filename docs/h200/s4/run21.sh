#!/bin/bash
# Next session's first GPU call: what session 4 wrote after its device time was spent.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r21; mkdir -p $R
timeout 150 python3 .probe/tma_probe.py $R > $R/tma_probe.txt 2>&1; grep -v "^\[" $R/tma_probe.txt | tail -n 30 | cut -c1-200
( time MLPGEN_TEST_GPU=1 timeout 400 python3 -m pytest -q -m gpu tests -p no:cacheprovider -rf > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
tar czf $OUT/run21.tgz -C /tmp r21
