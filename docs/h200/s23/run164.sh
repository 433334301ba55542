#!/bin/bash
# Session 23, first call: persist's grid barrier four ways (barrier_probe.py) and stream tiles
# outside the space's domain at the large batches (stream_tiles_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/run164; mkdir -p $R
timeout 300 python3 docs/h200/s23/barrier_probe.py $R/barrier > $R/barrier.log 2>&1; echo "barrier rc $?"
grep -v "^checked" $R/barrier.log | grep -v Warning | tail -12
timeout 240 python3 docs/h200/s23/stream_tiles_probe.py $R/tiles > $R/tiles.log 2>&1; echo "tiles rc $?"
tail -12 $R/tiles.log
cd /tmp && tar czf $OUT/run164.tgz run164/*.log run164/*/*.txt
