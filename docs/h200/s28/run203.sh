#!/bin/bash
# Session 28, after run202: bench's GPU time keeps the GPU busy over each call's launch (eager's
# launches outlasted do_bench's L2 flush). The bench GPU tests, then the headline with every
# contender at all nine buckets, then every public-matrix module (run200's loop), all on it.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run203; mkdir -p $R
S=$SECONDS
MLPGEN_TEST_GPU=1 timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_bench.py > $R/tests.txt 2>&1
echo "tests rc $? $((SECONDS-S)) s" | tee -a $R/tests.txt; grep -E "^(FAILED|ERROR|SKIPPED)|passed|failed|assert" $R/tests.txt | head -8 | cut -c1-300
H=tuned/mlp_256x512x256_gelu_fp16
S=$SECONDS
timeout 330 mlpgen bench $H.py --json --plot $R/bench_all.png > $R/bench_all.json 2> $R/bench_all.txt
echo "bench rc $? $((SECONDS-S)) s" | tee -a $R/bench_all.txt; grep -v "^\[" $R/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|^per-call|^GPU time" | tail -n 24 | cut -c1-160
P=/tmp/run203; mkdir -p $P
for n in mlp_64x64x64x64x64x3_relu_fp16 mlp_128x128x128_silu_bf16 mlp_784x1024x1024x10_relu_fp32 mlp_1024x4096x1024_gelu_tanh_bf16; do
  S=$SECONDS
  timeout 60 mlpgen bench tuned/$n.py --no-compile --budget 50 --json > $P/bench_$n.json 2> $P/bench_$n.txt
  echo "$n rc $? $((SECONDS-S)) s"; grep -A30 "^GPU time" $P/bench_$n.txt | grep -v "^\[" | head -8
done
tar czf $R/public.tgz -C /tmp run203
