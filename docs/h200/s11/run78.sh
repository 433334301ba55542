#!/bin/bash
# Session 11: the Gluon kernel's data movement alone (GLUON_MLP_PART=5: no wgmma, no GELU; 206 us
# of its 332 at 262144 rows in run77) with 32-column weight slices in rings of 2, 3 and 4 stages
# beside the 64-column slices' 2: the same bytes, 64-128 KB of weights in flight per SM.
# Bandwidth-bound if the times agree, latency-bound if more stages are faster.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r78; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader > $R/gpu.txt
GLUON_MLP_PART=5 timeout 200 python3 docs/h200/s11/gluon_probe.py part $R 0 3 1 2 > $R/parts.txt 2> $R/parts.err
echo "rc $?" >> $R/parts.txt
cat $R/gpu.txt $R/parts.txt; tail -n 4 $R/parts.err | cut -c1-400
tar czf $OUT/run78.tgz -C /tmp r78
