#!/bin/bash
# Session 22, fourth call: chain's calls at the headline's 1024 rows with the problem drawn on the
# CPU and on the device, before and after a graph capture, and whether the native lane takes them.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/run162; mkdir -p $R
( time timeout 150 python3 docs/h200/s22/lane_probe.py $R > $R/lane_probe.log 2>&1 ) 2> $R/lane_probe.time
tail -14 $R/lane_probe.log | cut -c1-220; grep real $R/lane_probe.time
tar czf $OUT/run162.tgz -C /tmp run162
