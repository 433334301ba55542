#!/bin/bash
# Session 6, call 6: layered tiles outside its domain at 1024 and 4096 rows (layered_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r33; mkdir -p $R
timeout 200 python3 docs/h200/s6/layered_probe.py $R > $R/layered_probe.out 2>&1; tail -n 14 $R/layered_probe.out | cut -c1-160
rm -rf $R/work
tar czf $OUT/run33.tgz -C /tmp r33
