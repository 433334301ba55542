#!/bin/bash
# Session 8, third call: programmatic dependent launch between the two layers (pdl_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r46; mkdir -p $R
timeout 300 python3 docs/h200/s8/pdl_probe.py $R/probe 2>&1 | tail -n 30
tar czf $OUT/run46.tgz -C /tmp r46
