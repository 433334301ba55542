#!/bin/bash
# Session 9, sixth call: split's GPU time at 1 and 64 rows taken apart (docs/h200/s9/split_parts_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r57; mkdir -p $R
( time timeout 240 python3 docs/h200/s9/split_parts_probe.py $R/probe > $R/split_parts.txt 2> $R/split_parts.err ) 2> $R/split_parts.time
cat $R/split_parts.txt; tail -n 4 $R/split_parts.err | cut -c1-200; grep real $R/split_parts.time
rm -f $R/probe/*.py
tar czf $OUT/run57.tgz -C /tmp r57
