#!/bin/bash
# Session 8, with the device time left: torch.compile (default and max-autotune) against the
# shipped headline module (run47's tune, the second lane) at all nine buckets.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r49; mkdir -p $R
( time timeout 300 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --only eager,compile,max-autotune,mlpgen --budget 270 --json > $R/bench_compile.json 2> $R/bench_compile.txt ) 2> $R/bench_compile.time
grep -v "^\[" $R/bench_compile.txt | grep -E "^ *(batch|[0-9]+ )|note: mlpgen|per-call|GPU time" | tail -n 24 | cut -c1-120; grep real $R/bench_compile.time
tar czf $OUT/run49.tgz -C /tmp r49
