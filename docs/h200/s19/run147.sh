#!/bin/bash
# Session 19, sixth call: the final code's GPU tests of the tuner and the native lane.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r147; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 170 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_tune.py tests/test_native.py > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
tar czf $OUT/run147.tgz -C /tmp r147
