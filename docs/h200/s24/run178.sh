#!/bin/bash
# Session 24, eighth call: the shipped 1024-row persist cell against 64 x 32 tiles on one or two
# programs an SM (persist_tiles_probe.py, PERSIST_PROBE=grid, 3 rounds: the session's last
# device minutes).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run178; mkdir -p $R
PERSIST_PROBE=grid PERSIST_PROBE_ROUNDS=3 timeout 100 python3 docs/h200/s24/persist_tiles_probe.py $R/grid 1024 > $R/grid.log 2>&1; echo "grid rc $?"
grep -v Warning $R/grid.log | tail -12; rm -f $R/grid/*.py
