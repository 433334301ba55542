#!/bin/bash
# Session 17, third call: the cluster dot form with every load ahead of the first barrier
# (docs/h200/s17/loads_probe.py) against the form before it, 16-1024 rows.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r130; mkdir -p $R
timeout 400 python3 docs/h200/s17/loads_probe.py $R > $R/probe.log 2>&1; echo "probe rc $?"
grep -v Warning $R/probe.log | tail -40 | cut -c1-200
tar czf $OUT/run130.tgz -C /tmp r130
