#!/bin/bash
# Session 11: the Gluon kernel (run75: correct, ties stream_tma at 262144 rows) with its two
# consumers taking turns to issue wgmmas (ping-pong through two mbarriers), against the same
# kernel without turns, each config checked in its own process, then timed (gluon_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r76; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader > $R/gpu.txt
OK=""
for i in 0 4 5; do
  timeout 60 python3 docs/h200/s11/gluon_probe.py check $i >> $R/checks.txt 2>> $R/checks.err && OK="$OK $i"
  echo "config $i rc $?" >> $R/checks.txt
done
cat $R/gpu.txt $R/checks.txt; tail -n 4 $R/checks.err | cut -c1-400
if [ -n "$OK" ]; then
  ( time timeout 280 python3 docs/h200/s11/gluon_probe.py time $R $OK > $R/time.txt 2> $R/time.err ) 2> $R/time.time
  cat $R/time.txt; tail -n 4 $R/time.err | cut -c1-400; grep real $R/time.time
fi
tar czf $OUT/run76.tgz -C /tmp r76
