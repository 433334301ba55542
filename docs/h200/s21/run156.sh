#!/bin/bash
# Session 21, third call: the shipped tables after run154/run155 benched: the headline at
# 1-4096 rows twice (its 1024-row call cell is now chain in the native lane, 4096 persist with
# PDL), 1024,4096,1024 bf16 at every bucket (64 rows chain, 1024 rows cuBLASLt's epilogue).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r156; mkdir -p $R
for i in 1 2; do
  timeout 100 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --no-compile --batches 1,16,64,256,1024,4096 --json > $R/bench_headline_$i.json 2> $R/bench_headline_$i.txt; tail -20 $R/bench_headline_$i.txt | grep -v "^\[" 
done
timeout 150 mlpgen bench tuned/mlp_1024x4096x1024_gelu_tanh_bf16.py --no-compile --budget 100 --json > $R/bench_bf16.json 2> $R/bench_bf16.txt; tail -20 $R/bench_bf16.txt | grep -v "^\["
tar czf $OUT/run156.tgz -C /tmp r156
