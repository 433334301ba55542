#!/bin/bash
# Session 16, eighth call: what the second cluster barrier's fence costs (fence_probe.py: the
# shipped winners at 1-256 rows against the same kernels with a relaxed arrive, timing only).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r126; mkdir -p $R
( time timeout 150 python3 docs/h200/s16/fence_probe.py $R > $R/probe.txt 2> $R/probe.err ) 2> $R/probe.time
cat $R/probe.txt; tail -n 3 $R/probe.err | cut -c1-300; grep real $R/probe.time
rm -f $R/probe_*.py; tar czf $OUT/run126.tgz -C /tmp r126
