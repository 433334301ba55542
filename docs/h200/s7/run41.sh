#!/bin/bash
# Session 7: GPU kernel tests on the re-tuned shipped headline (run40's table: wgmma, no
# spills); the four public modules benched with the lane; torch.compile against the shipped
# headline at all nine buckets.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r41; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py -p no:cacheprovider -rf > $R/gpu_tests_kernels.txt 2>&1 ) 2> $R/gpu_tests_kernels.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_kernels.txt | head -10; grep real $R/gpu_tests_kernels.time
b() {  # name timeout
  ( time timeout $2 mlpgen bench tuned/$1.py --no-compile --json > $R/bench_$1.json 2> $R/bench_$1.txt ) 2> $R/bench_$1.time
  echo "== $1 $(grep real $R/bench_$1.time)"; grep -v "^\[" $R/bench_$1.txt | grep -E "^ *[0-9]+ |^per-call" | head -n 10 | cut -c1-90
}
b mlp_64x64x64x64x64x3_relu_fp16 40
b mlp_128x128x128_silu_bf16 40
b mlp_784x1024x1024x10_relu_fp32 50
b mlp_1024x4096x1024_gelu_tanh_bf16 50
( time timeout 290 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --only eager,compile,max-autotune,mlpgen --budget 270 --json > $R/bench_compile.json 2> $R/bench_compile.txt ) 2> $R/bench_compile.time
grep -v "^\[" $R/bench_compile.txt | grep -E "^ *(batch|[0-9]+ )|note: mlpgen|per-call|GPU time" | tail -n 24 | cut -c1-120; grep real $R/bench_compile.time
tar czf $OUT/run41.tgz -C /tmp r41
