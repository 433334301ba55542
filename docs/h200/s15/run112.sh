#!/bin/bash
# Session 15, second call: which cluster tile crashed run111's GPU test (docs/h200/s15/crash_probe.py:
# every spec, dtype and tile in a process of its own, CUDA_LAUNCH_BLOCKING=1).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r112; mkdir -p $R
( time timeout 400 python3 docs/h200/s15/crash_probe.py > $R/crash.txt 2> $R/crash.err ) 2> $R/crash.time
cat $R/crash.txt; tail -n 5 $R/crash.err | cut -c1-300; grep real $R/crash.time
tar czf $OUT/run112.tgz -C /tmp r112
