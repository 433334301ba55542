#!/bin/bash
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r12; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
( time MLPGEN_TEST_GPU=1 timeout 330 python3 -m pytest -q -m gpu tests -p no:cacheprovider > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
tail -15 $R/gpu_tests.txt; grep real $R/gpu_tests.time
timeout 200 python3 .probe/layered_probe.py $R 2>&1 | tail -8
tar czf $OUT/run12.tgz -C /tmp r12
