#!/bin/bash
# Session 20, fourth call: every public-matrix module as shipped now, benched at all of its
# buckets (per call and under CUDA graphs, against eager), the check of "never slower than eager".
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r151; mkdir -p $R
for n in mlp_64x64x64x64x64x3_relu_fp16 mlp_128x128x128_silu_bf16 mlp_784x1024x1024x10_relu_fp32 mlp_1024x4096x1024_gelu_tanh_bf16; do
  timeout 130 mlpgen bench tuned/$n.py --no-compile --budget 100 --json > $R/bench_$n.json 2> $R/bench_$n.txt
  grep -A30 "^per-call" $R/bench_$n.txt | grep -v "^\[" | head -16
done
tar czf $OUT/run151.tgz -C /tmp r151
