#!/bin/bash
# Session 23, third call: the shipped headline (run165's table: persist's new barrier at 1024
# rows) with every contender at all nine buckets in one bench run, with its plot; the
# re-tuned 784,1024,1024,10 fp32 module benched at all of its buckets.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/run166; mkdir -p $R
( time timeout 380 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --json --plot $R/bench_all.png > $R/bench_all.json 2> $R/bench_all.txt ) 2> $R/bench_all.time
grep -v "^\[" $R/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|^note|^per-call|^GPU time" | tail -n 30 | cut -c1-160; grep real $R/bench_all.time
n=mlp_784x1024x1024x10_relu_fp32
( time timeout 55 mlpgen bench tuned/$n.py --no-compile --budget 40 --json > $R/bench_$n.json 2> $R/bench_$n.txt ) 2> $R/bench_$n.time
grep -A20 "^per-call" $R/bench_$n.txt | grep -v "^\[" | head -18 | cut -c1-160; grep real $R/bench_$n.time
cd /tmp && tar czf $OUT/run166.tgz run166
