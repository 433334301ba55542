#!/bin/bash
# Session 11: where the Gluon kernel's time goes (run75/run76: it ties stream_tma, ping-pong or
# not): the kernel cut back part by part (GLUON_MLP_PART: 1 no GELU, 2 no second-layer wgmma,
# 3 no first-layer wgmma, 5 neither wgmma nor GELU; 0 the whole kernel), one process each,
# GPU us beside the shipped kernel at 16384 and 262144 rows (gluon_probe.py part).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r77; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader > $R/gpu.txt
for p in 0 1 2 3 5; do
  GLUON_MLP_PART=$p timeout 90 python3 docs/h200/s11/gluon_probe.py part $R >> $R/parts.txt 2>> $R/parts.err
  echo "part $p rc $?" >> $R/parts.txt
done
cat $R/gpu.txt $R/parts.txt; tail -n 4 $R/parts.err | cut -c1-400
tar czf $OUT/run77.tgz -C /tmp r77
