#!/bin/bash
# Session 23, sixth call: the shipped headline benched at all nine buckets without torch.compile (the
# contenders whose compile workers share the host), on the same code and table.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/run169; mkdir -p $R
( time timeout 150 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --no-compile --json > $R/bench_all.json 2> $R/bench_all.txt ) 2> $R/bench_all.time
grep -v "^\[" $R/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|^per-call|^GPU time" | tail -n 24 | cut -c1-160; grep real $R/bench_all.time
cd /tmp && tar czf $OUT/run169.tgz run169
