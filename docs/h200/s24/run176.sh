#!/bin/bash
# Session 24, sixth call (warm machine, torch.compile's kernels cached by run173): the shipped
# headline with every contender at every bucket again.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
B=$OUT/run176; mkdir -p $B
( time timeout 250 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --json --plot $B/bench_all.png > $B/bench_all.json 2> $B/bench_all.txt ) 2> $B/bench_all.time
grep -v "^\[" $B/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|^per-call|^GPU time" | tail -n 24 | cut -c1-160; grep real $B/bench_all.time
