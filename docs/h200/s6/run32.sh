#!/bin/bash
# Session 6, call 5: split with its second-layer weight tile prefetched (split_prefetch_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r32; mkdir -p $R
timeout 200 python3 docs/h200/s6/split_prefetch_probe.py $R/probe > $R/split_prefetch_probe.out 2>&1; tail -n 16 $R/split_prefetch_probe.out | cut -c1-160
cp $R/probe/*.log $R/ 2>/dev/null; rm -rf $R/probe
tar czf $OUT/run32.tgz -C /tmp r32
