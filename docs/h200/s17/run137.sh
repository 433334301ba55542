#!/bin/bash
# Session 17, tenth call: where in the SASS the headline's 16-row (one row a cluster, 64-column
# slices) and 64-row (16-row tile) cluster winners wait: ncu's per-instruction warp-stall
# sampling (SourceCounters, source page, SASS) of one launch after 30.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r137; mkdir -p $R
H=mlp_256x512x256_gelu_fp16
for m in 16 64; do
  timeout 120 ncu --clock-control none --launch-skip 30 --launch-count 1 -k regex:_k_cluster --section SourceCounters --section WarpStateStats --page source --print-source sass --csv python3 docs/h200/s16/ncu_target.py tuned/$H.py $m > $R/source$m.csv 2> $R/source$m.err
  echo "== $m rows: $(wc -l < $R/source$m.csv) lines"; tail -n 2 $R/source$m.err | cut -c1-200; head -c 600 $R/source$m.csv; echo
done
tar czf $OUT/run137.tgz -C /tmp r137
