#!/bin/bash
# Session 22, first call: why chain's calls timed slower in the bench than in the tuner at the
# headline's 1024 rows (loop_probe.py); then the shipped headline benched with every contender
# at all nine buckets in one run; then the two public-matrix modules re-tuned in session 21
# benched at all of their buckets (without torch.compile).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=${OUT:-/tmp}/run159; mkdir -p $R
( time timeout 90 python3 docs/h200/s22/loop_probe.py $R > $R/loop_probe.log 2>&1 ) 2> $R/loop_probe.time
tail -8 $R/loop_probe.log | cut -c1-200; grep real $R/loop_probe.time
( time timeout 380 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --json --plot $R/bench_all.png > $R/bench_all.json 2> $R/bench_all.txt ) 2> $R/bench_all.time
grep -v "^\[" $R/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|^note|^per-call|^GPU time" | tail -n 30 | cut -c1-160; grep real $R/bench_all.time
for n in mlp_784x1024x1024x10_relu_fp32 mlp_1024x4096x1024_gelu_tanh_bf16; do
  ( time timeout 55 mlpgen bench tuned/$n.py --no-compile --budget 40 --json > $R/bench_$n.json 2> $R/bench_$n.txt ) 2> $R/bench_$n.time
  grep -A20 "^per-call" $R/bench_$n.txt | grep -v "^\[" | head -18 | cut -c1-160; grep real $R/bench_$n.time
done
