#!/bin/bash
# Session 26, third call: the shipped headline (256 rows re-tuned in run184) benched with every
# contender at every bucket (mlpgen bench --json --plot).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
H=tuned/mlp_256x512x256_gelu_fp16
B=$OUT/run186; mkdir -p $B
( time timeout 400 mlpgen bench $H.py --json --plot $B/bench_all.png > $B/bench_all.json 2> $B/bench_all.txt ) 2> $B/bench_all.time
grep -v "^\[" $B/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|^per-call|^GPU time" | tail -n 24 | cut -c1-160; grep real $B/bench_all.time
cd $OUT && tar czf run186.tgz run186 && rm -rf run186
