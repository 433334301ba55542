#!/bin/bash
# Session 11: the Gluon kernel with two weight rings (run74 hung: with one ring of 2 stages a
# consumer waited for slice j+1 before releasing slice j-1), each config checked in its own
# process under a timeout, then the configs that passed timed (docs/h200/s11/gluon_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r75; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader > $R/gpu.txt
OK=""
for i in 0 1 2 3; do
  timeout 60 python3 docs/h200/s11/gluon_probe.py check $i >> $R/checks.txt 2>> $R/checks.err && OK="$OK $i"
  echo "config $i rc $?" >> $R/checks.txt
done
cat $R/gpu.txt $R/checks.txt; tail -n 4 $R/checks.err | cut -c1-400
if [ -n "$OK" ]; then
  ( time timeout 280 python3 docs/h200/s11/gluon_probe.py time $R $OK > $R/time.txt 2> $R/time.err ) 2> $R/time.time
  cat $R/time.txt; tail -n 4 $R/time.err | cut -c1-400; grep real $R/time.time
fi
tar czf $OUT/run75.tgz -C /tmp r75
