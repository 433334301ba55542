#!/bin/bash
# Session 10, seventh call: the hidden layer handed over through distributed shared memory
# (docs/h200/s10/dsmem_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r68; mkdir -p $R
( time timeout 240 python3 docs/h200/s10/dsmem_probe.py $R > $R/dsmem.txt 2> $R/dsmem.err ) 2> $R/dsmem.time
cat $R/dsmem.txt; tail -n 12 $R/dsmem.err | cut -c1-300; grep real $R/dsmem.time
tar czf $OUT/run68.tgz -C /tmp r68
