#!/bin/bash
# Session 14, seventh call: the re-tuned headline (cluster the call and graph winner at 1-64 rows)
# against every contender, torch.compile's two modes too, at 1, 16, 64 and 1024 rows.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r107; mkdir -p $R
( time timeout 300 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --batches 1,16,64,1024 --json > $R/bench_all.json 2> $R/bench_all.txt ) 2> $R/bench_all.time
grep -v "^\[" $R/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|note|per-call|GPU time" | tail -n 20 | cut -c1-160; grep real $R/bench_all.time
tar czf $OUT/run107.tgz -C /tmp r107
