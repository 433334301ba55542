#!/bin/bash
# Session 12, last call: the shipped headline with the native lane against every contender
# (eager, eager in a CUDA graph, torch.compile default and max-autotune, the module, the module in
# a CUDA graph) at all nine buckets in one mlpgen bench run.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r89; mkdir -p $R
( time timeout 540 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --json --plot $R/bench_all.png > $R/bench_all.json 2> $R/bench_all.txt ) 2> $R/bench_all.time
grep -v "^\[" $R/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|note|per-call|GPU time" | tail -n 30 | cut -c1-140; grep real $R/bench_all.time
tar czf $OUT/run89.tgz -C /tmp r89
