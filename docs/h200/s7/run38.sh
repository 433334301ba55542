#!/bin/bash
# Session 7: where a call's host time goes (host_profile_probe.py), shipped headline module.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r38; mkdir -p $R
timeout 300 python3 docs/h200/s7/host_profile_probe.py $R/probe > $R/host_profile_probe.out 2>&1; tail -n 70 $R/host_profile_probe.out | cut -c1-160
tar czf $OUT/run38.tgz -C /tmp r38
