#!/bin/bash
# Written in session 27 for the next session (run in session 28): every GPU test on
# session 27's final code (chain's wait-then-release, the PDL pass skipping layered, the re-tuned
# cells); run196 ran only the shipped modules', chain's and PDL's GPU tests on it.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run197; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 570 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs --durations=8 tests/ > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|ERROR|SKIPPED)|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
