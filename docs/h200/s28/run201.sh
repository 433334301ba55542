#!/bin/bash
# Session 28: the headline benched again with every contender at all nine buckets on the
# shipped cells (the one-run ratios; run194 in session 27 was the first on them), with the plot.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run201; mkdir -p $R
H=tuned/mlp_256x512x256_gelu_fp16
S=$SECONDS
timeout 400 mlpgen bench $H.py --json --plot $R/bench_all.png > $R/bench_all.json 2> $R/bench_all.txt
echo "bench rc $? $((SECONDS-S)) s" | tee -a $R/bench_all.txt; grep -v "^\[" $R/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|^per-call|^GPU time" | tail -n 24 | cut -c1-160
