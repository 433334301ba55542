#!/bin/bash
# Session 18, first call: chain's last layer split over k across a cluster, and chain's layers
# with tiles of their own (docs/h200/s18/splitk_probe.py) at 1024, 256 and 64 rows.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r138; mkdir -p $R
timeout 480 python3 docs/h200/s18/splitk_probe.py $R > $R/probe.log 2>&1; echo "probe rc $?"
grep -v Warning $R/probe.log | tail -60 | cut -c1-220
tar czf $OUT/run138.tgz -C /tmp r138
