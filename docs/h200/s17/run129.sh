#!/bin/bash
# Session 17, second call: chain with per-row-block counters instead of the last layer's
# griddepcontrol.wait (docs/h200/s17/flags_probe.py) at 1024 and 256 rows, beside chain.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r129; mkdir -p $R
timeout 400 python3 docs/h200/s17/flags_probe.py $R > $R/probe.log 2>&1; echo "probe rc $?"
grep -v Warning $R/probe.log | tail -40 | cut -c1-200
tar czf $OUT/run129.tgz -C /tmp r129
