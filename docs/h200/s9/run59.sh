#!/bin/bash
# Session 9, eighth call: chain at 1 and 64 rows against split (docs/h200/s9/chain_small_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r59; mkdir -p $R
( time timeout 240 python3 docs/h200/s9/chain_small_probe.py $R/probe > $R/chain_small.txt 2> $R/chain_small.err ) 2> $R/chain_small.time
grep -E "^==|^  " $R/chain_small.txt; tail -n 4 $R/chain_small.err | cut -c1-200; grep real $R/chain_small.time
rm -f $R/probe/*/*.journal
tar czf $OUT/run59.tgz -C /tmp r59
