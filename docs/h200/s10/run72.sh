#!/bin/bash
# Session 10, last call: the cluster kernel with split's layer-1 tiling
# (docs/h200/s10/cluster_tile_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r72; mkdir -p $R
( time timeout 120 python3 docs/h200/s10/cluster_tile_probe.py $R > $R/cluster_tile.txt 2> $R/cluster_tile.err ) 2> $R/cluster_tile.time
cat $R/cluster_tile.txt; tail -n 8 $R/cluster_tile.err | cut -c1-300; grep real $R/cluster_tile.time
tar czf $OUT/run72.tgz -C /tmp r72
