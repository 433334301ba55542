#!/bin/bash
# Session 24, fourth call: every GPU test on the code of run172 (persist's last_block_n and 4
# stages; layered's and chain's tiles rendered from the same per-layer plan).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run174; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 560 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs --durations=10 tests/ > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|ERROR)|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
