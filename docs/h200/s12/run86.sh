#!/bin/bash
# Session 12 (run as one command line on the warm machine after run85): the shipped headline
# benched three times at the small batches, each run in its own process, with the native lane.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export MLPGEN_CACHE=/tmp/mlpgen_cache; R=$OUT/r86; mkdir -p $R
for i in 1 2 3; do
  timeout 100 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --batches 1,16,64,256,1024 --no-compile --json > $R/bench_small_$i.json 2> $R/bench_small_$i.txt
  grep -v "^\[" $R/bench_small_$i.txt | grep -E "^ *[0-9]+ |^per-call|^GPU" | head -n 6
done
