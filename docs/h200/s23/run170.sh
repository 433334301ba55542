#!/bin/bash
# Session 23, seventh call, on a freshly started machine: run166's every-contender bench of the
# shipped headline once more (runs 168 and 169 ran on a host that had slowed).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run170; mkdir -p $R
( time timeout 320 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --json --plot $R/bench_all.png > $R/bench_all.json 2> $R/bench_all.txt ) 2> $R/bench_all.time
grep -v "^\[" $R/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|^per-call|^GPU time" | tail -n 24 | cut -c1-160; grep real $R/bench_all.time
