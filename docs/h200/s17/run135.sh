#!/bin/bash
# Session 17, eighth call: every contender (both torch.compile modes too) at 1, 16, 64, 256 and
# 1024 rows on the shipped headline table (run133's), with the latency plot.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r135; mkdir -p $R
H=mlp_256x512x256_gelu_fp16
( time timeout 300 mlpgen bench tuned/$H.py --batches 1,16,64,256,1024 --json --plot $R/bench.png > $R/bench_all.json 2> $R/bench_all.txt ) 2> $R/bench_all.time
grep -v "^\[" $R/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|note|per-call|GPU time" | tail -n 30 | cut -c1-170; grep real $R/bench_all.time
tar czf $OUT/run135.tgz -C /tmp r135
