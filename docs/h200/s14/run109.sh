#!/bin/bash
# Session 14, ninth call: where the cluster kernel's time goes at 1 and 16 rows
# (docs/h200/s14/cluster_parts_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r109; mkdir -p $R
( time timeout 200 python3 docs/h200/s14/cluster_parts_probe.py $R > $R/parts.txt 2> $R/parts.err ) 2> $R/parts.time
cat $R/parts.txt; tail -n 8 $R/parts.err | cut -c1-300; grep real $R/parts.time
rm -f $R/parts_*.py; tar czf $OUT/run109.tgz -C /tmp r109
