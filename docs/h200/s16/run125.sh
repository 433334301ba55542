#!/bin/bash
# Session 16, seventh call: the GPU tests run124 left when its 200 s ran out (its first 17
# passed): opcheck, torch.compile, autocast, second GPU and both lanes of every strategy.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r125; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 280 python3 -m pytest -v -m gpu -p no:cacheprovider -rfs tests/test_gpu_module.py -k "opcheck or compile or autocast or second_gpu or lane" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "PASSED|FAILED|SKIPPED|ERROR|passed|failed" $R/gpu_tests.txt | sed 's/.*:://' | cut -c1-100 | head -24; grep real $R/gpu_tests.time
tar czf $OUT/run125.tgz -C /tmp r125
