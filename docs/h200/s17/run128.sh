#!/bin/bash
# Session 17, first call: chain's last layer with its weights loaded before the PDL wait
# (docs/h200/s17/prefetch_probe.py) at 1024 and 256 rows, beside the shipped chain kernels.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r128; mkdir -p $R
timeout 400 python3 docs/h200/s17/prefetch_probe.py $R > $R/probe.log 2>&1; echo "probe rc $?"
grep -v Warning $R/probe.log | tail -40 | cut -c1-200
tar czf $OUT/run128.tgz -C /tmp r128
