#!/bin/bash
# Session 10, run69 again with 25 rounds of 6 ms loops (run69: 7 of 15 ms, noisy): FusedMLP.__call__ without nn.Module's where it only calls forward
# (docs/h200/s10/call_probe.py: old and new renders of the headline interleaved)
# (no GPU tests: run69 ran them).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r70; mkdir -p $R
( time timeout 150 python3 docs/h200/s10/call_probe.py $R 25 0.006 > $R/call_probe.txt 2> $R/call_probe.err ) 2> $R/call_probe.time
cat $R/call_probe.txt; tail -n 4 $R/call_probe.err | cut -c1-300; grep real $R/call_probe.time
tar czf $OUT/run70.tgz -C /tmp r70
