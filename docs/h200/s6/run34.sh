#!/bin/bash
# Session 6, call 7: the other three public-matrix modules (as shipped: the fourth session's
# tables, re-rendered) benched against eager again.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r34; mkdir -p $R
b() {  # name timeout
  ( time timeout $2 mlpgen bench tuned/$1.py --no-compile --json > $R/bench_$1.json 2> $R/bench_$1.txt ) 2> $R/bench_$1.time
  echo "== $1 $(grep real $R/bench_$1.time)"; grep -v "^\[" $R/bench_$1.txt | grep -E "^ *[0-9]+ |^per-call|^GPU" | cut -c1-110
}
b mlp_1024x4096x1024_gelu_tanh_bf16 150
b mlp_64x64x64x64x64x3_relu_fp16 80
b mlp_784x1024x1024x10_relu_fp32 150
tar czf $OUT/run34.tgz -C /tmp r34
