#!/bin/bash
# Session 6, call 8: torch.compile against the shipped headline at the buckets run31 did not
# cover (16, 256, 4096) and again at 16384-262144 (run28 had the fifth session's module).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r35; mkdir -p $R
( time timeout 300 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --batches 16,256,4096,16384,65536,262144 --only eager,compile,max-autotune,mlpgen --budget 270 --json > $R/bench_compile_rest.json 2> $R/bench_compile_rest.txt ) 2> $R/bench_compile_rest.time
grep -v "^\[" $R/bench_compile_rest.txt | grep -E "^ *(batch|[0-9]+ )|note: (mlpgen|compile|max)|per-call|GPU time" | tail -n 20; grep real $R/bench_compile_rest.time
tar czf $OUT/run35.tgz -C /tmp r35
