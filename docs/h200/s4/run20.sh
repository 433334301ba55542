#!/bin/bash
# Session 4, call C: torch.compile against the headline at small batches, the re-tuned matrix
# modules benched (graph columns), the layered kernel tests run18's time limit cut off.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r20; mkdir -p $R
timeout 110 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --batches 1,64,1024 --only eager,compile,max-autotune,mlpgen --budget 100 --json > $R/bench_compile_small.json 2> $R/bench_compile_small.txt
grep -v "^\[" $R/bench_compile_small.txt | tail -n 14
for n in mlp_128x128x128_silu_bf16 mlp_1024x4096x1024_gelu_tanh_bf16; do
  timeout 45 mlpgen bench tuned/$n.py --no-compile --json > $R/bench_$n.json 2> $R/bench_$n.txt
  grep -v "^\[" $R/bench_$n.txt | sed -n 3,10p
done
MLPGEN_TEST_GPU=1 timeout 50 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py -k layered -p no:cacheprovider -rf > $R/gpu_tests_layered.txt 2>&1
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_layered.txt | head
tar czf $OUT/run20.tgz -C /tmp r20
