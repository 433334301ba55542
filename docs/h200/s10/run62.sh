#!/bin/bash
# Session 10, first call: a thread-block-cluster barrier in place of split's arrival counter
# (docs/h200/s10/cluster_probe.py), beside the shipped headline winners.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r62; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
( time timeout 420 python3 docs/h200/s10/cluster_probe.py $R > $R/cluster_probe.txt 2> $R/cluster_probe.err ) 2> $R/cluster_probe.time
cat $R/cluster_probe.txt; tail -n 8 $R/cluster_probe.err | cut -c1-300; grep real $R/cluster_probe.time
tar czf $OUT/run62.tgz -C /tmp r62
