#!/bin/bash
# Session 15, fifth call: per-call and CUDA-graph replay times of the re-tuned headline move
# between runs (run114: 3.85 us a graph replay at batch 1 in the bench, 4.72 in the probe):
# the bench three more times at 1, 16, 64 and 1024 rows (no torch.compile), one after another.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r115; mkdir -p $R
for i in 1 2 3; do
  timeout 100 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --no-compile --batches 1,16,64,1024 --json > $R/bench$i.json 2> $R/bench$i.txt
  echo "== bench $i"; grep -v "^\[" $R/bench$i.txt | grep -E "^ *(batch|[0-9]+ )|per-call|GPU time" | cut -c1-120
done
tar czf $OUT/run115.tgz -C /tmp r115
