#!/bin/bash
# Session 11: the Gluon kernel's math alone (GLUON_MLP_PART=6: no TMA load and no wait for one,
# the wgmmas reading whatever shared memory holds) beside the whole kernel (0) and its data
# movement alone (5), one process each, GPU us beside the shipped kernel (gluon_probe.py part):
# if the math alone is near 0.55x eager (~251 us at 262144 rows), no overlap of the two reaches
# the target. Then the same for the x-in-registers variant (GLUON_MLP_XREG=1, 32-column slices).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r80; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader > $R/gpu.txt
for p in 0 5 6; do
  GLUON_MLP_PART=$p timeout 90 python3 docs/h200/s11/gluon_probe.py part $R 0 4 >> $R/parts.txt 2>> $R/parts.err
  echo "part $p rc $?" >> $R/parts.txt
done
for p in 0 6; do
  GLUON_MLP_XREG=1 GLUON_MLP_PART=$p timeout 90 python3 docs/h200/s11/gluon_probe.py part $R 2 6 >> $R/parts.txt 2>> $R/parts.err
  echo "xreg part $p rc $?" >> $R/parts.txt
done
cat $R/gpu.txt $R/parts.txt; tail -n 4 $R/parts.err | cut -c1-400
tar czf $OUT/run80.tgz -C /tmp r80
