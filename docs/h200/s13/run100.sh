#!/bin/bash
# Session 13: the re-tuned headline against every contender (torch.compile default and
# max-autotune too) at the buckets whose winners changed (256: CUDA-graph tile; 4096: call tile)
# and at 1 and 16384 rows.
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r100; mkdir -p $R
( time timeout 230 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --batches 1,256,4096,16384 --json > $R/bench_all.json 2> $R/bench_all.txt ) 2> $R/bench_all.time
grep -v "^\[" $R/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|note|per-call|GPU time" | tail -n 20 | cut -c1-150; grep real $R/bench_all.time
tar czf $OUT/run100.tgz -C /tmp r100
