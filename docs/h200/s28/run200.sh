#!/bin/bash
# Session 28: every public-matrix module benched at all of its buckets on the final tables
# (run151's loop, session 20; 784,1024,1024,10 fp32 as re-tuned in run199).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/run200; mkdir -p $R
for n in mlp_64x64x64x64x64x3_relu_fp16 mlp_128x128x128_silu_bf16 mlp_784x1024x1024x10_relu_fp32 mlp_1024x4096x1024_gelu_tanh_bf16; do
  S=$SECONDS
  timeout 130 mlpgen bench tuned/$n.py --no-compile --budget 100 --json > $R/bench_$n.json 2> $R/bench_$n.txt
  echo "$n rc $? $((SECONDS-S)) s"; grep -A30 "^per-call" $R/bench_$n.txt | grep -v "^\[" | head -16
done
tar czf $OUT/run200.tgz -C /tmp run200
