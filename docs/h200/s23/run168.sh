#!/bin/bash
# Session 23, fifth call: run166's every-contender bench of the shipped headline once more, on
# the same code and table (how far a run's host moves the per-call cells).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/run168; mkdir -p $R
( time timeout 380 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --json --plot $R/bench_all.png > $R/bench_all.json 2> $R/bench_all.txt ) 2> $R/bench_all.time
grep -v "^\[" $R/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|^per-call|^GPU time" | tail -n 24 | cut -c1-160; grep real $R/bench_all.time
cd /tmp && tar czf $OUT/run168.tgz run168
