#!/bin/bash
# Session 14, sixth call: split against cluster per call, in GPU time and under CUDA graphs, one
# process (docs/h200/s14/call_cluster_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r106; mkdir -p $R
( time timeout 300 python3 docs/h200/s14/call_cluster_probe.py $R > $R/probe.txt 2> $R/probe.err ) 2> $R/probe.time
cat $R/probe.txt; tail -n 8 $R/probe.err | cut -c1-300; grep real $R/probe.time
rm -f $R/probe_*.py; tar czf $OUT/run106.tgz -C /tmp r106
