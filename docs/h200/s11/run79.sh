#!/bin/bash
# Session 11: the Gluon kernel with each consumer's x block in registers as the first layer's A
# operand (GLUON_MLP_XREG=1; run77: the first-layer wgmmas, both operands in shared memory, add
# 120 us to the 206 of the data movement alone at 262144 rows). 32-column slices (64 spill).
# Each config checked in its own process, then timed beside the shipped kernel and eager.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1 GLUON_MLP_XREG=1
R=/tmp/r79; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader > $R/gpu.txt
OK=""
for i in 1 2 5 6; do
  timeout 60 python3 docs/h200/s11/gluon_probe.py check $i >> $R/checks.txt 2>> $R/checks.err && OK="$OK $i"
  echo "config $i rc $?" >> $R/checks.txt
done
cat $R/gpu.txt $R/checks.txt; tail -n 4 $R/checks.err | cut -c1-400
if [ -n "$OK" ]; then
  ( time timeout 280 python3 docs/h200/s11/gluon_probe.py time $R $OK > $R/time.txt 2> $R/time.err ) 2> $R/time.time
  cat $R/time.txt; tail -n 4 $R/time.err | cut -c1-400; grep real $R/time.time
fi
tar czf $OUT/run79.tgz -C /tmp r79
