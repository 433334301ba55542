#!/bin/bash
# Session 22, third call: chain's host time at the headline's 1024 rows in the tuner's own
# measure, against the shipped module's (tuner_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/run161; mkdir -p $R
( time timeout 150 python3 docs/h200/s22/tuner_probe.py $R > $R/tuner_probe.log 2>&1 ) 2> $R/tuner_probe.time
tail -10 $R/tuner_probe.log | cut -c1-220; grep real $R/tuner_probe.time
tar czf $OUT/run161.tgz -C /tmp run161
