#!/bin/bash
# Session 14, second call: the DSMEM hand-over with paired stores (mode 2) at 1, 2, 16 and 64 rows
# (docs/h200/s14/dsred_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r102; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt
( time timeout 420 python3 docs/h200/s14/dsred_probe.py $R > $R/dsred.txt 2> $R/dsred.err ) 2> $R/dsred.time
cat $R/dsred.txt; tail -n 12 $R/dsred.err | cut -c1-400; grep real $R/dsred.time
tar czf $OUT/run102.tgz -C /tmp r102
