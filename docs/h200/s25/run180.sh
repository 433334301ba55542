#!/bin/bash
# Session 25, second call: every GPU test on the final code (the tuner's polish steps; the
# headline's 1024-row cell from run179).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run180; mkdir -p $R
git rev-parse --short HEAD > $R/commit.txt 2>/dev/null
( time MLPGEN_TEST_GPU=1 timeout 570 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs --durations=10 tests/ > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|ERROR)|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
cd $OUT && tar czf run180.tgz run180 && rm -rf run180
