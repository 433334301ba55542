#!/bin/bash
# Session 20, fifth call: what a CUDA-graph replay costs the host against the GPU, for empty
# kernels and for the headline module and eager at 1-1024 rows.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r152; mkdir -p $R
timeout 240 python3 docs/h200/s20/replay_floor_probe.py $R > $R/probe.log 2>&1; tail -22 $R/probe.log
tar czf $OUT/run152.tgz -C /tmp r152
