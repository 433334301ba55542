#!/bin/bash
# Session 10, sixth call: run63's batch-1 cluster kernel taken apart
# (docs/h200/s10/cluster_parts_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r67; mkdir -p $R
( time timeout 200 python3 docs/h200/s10/cluster_parts_probe.py $R > $R/cluster_parts.txt 2> $R/cluster_parts.err ) 2> $R/cluster_parts.time
cat $R/cluster_parts.txt; tail -n 8 $R/cluster_parts.err | cut -c1-300; grep real $R/cluster_parts.time
tar czf $OUT/run67.tgz -C /tmp r67
