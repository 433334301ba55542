#!/bin/bash
# Session 9, seventh call: a release-only arrival for split (docs/h200/s9/split_sync_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r58; mkdir -p $R
( time timeout 240 python3 docs/h200/s9/split_sync_probe.py $R/probe > $R/split_sync.txt 2> $R/split_sync.err ) 2> $R/split_sync.time
cat $R/split_sync.txt; tail -n 4 $R/split_sync.err | cut -c1-200; grep real $R/split_sync.time
rm -f $R/probe/*.py
tar czf $OUT/run58.tgz -C /tmp r58
