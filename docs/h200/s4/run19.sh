#!/bin/bash
# Session 4, call B: the public matrix re-tuned (tanh.approx activations, layered, graph
# winners), torch.compile against the new headline at large batches, the GPU module tests.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r19; mkdir -p $R/tuned
tune() {  # name widths act dtype timeout
  cp tuned/$1.py $R/tuned/
  ( time timeout $(( $5 + 40 )) mlpgen --widths $2 --act $3 --dtype $4 --out $R/tuned --batches 1,64,1024,16384,262144 --trials 8 --timeout $5 --json > $R/tune_$1.json 2> $R/tune_$1.err ) 2> $R/tune_$1.time
  rm -f $R/tuned/*.db; mlpgen show $R/tuned/$1.py > $R/show_$1.txt 2>&1
  echo "== $1 $(grep real $R/tune_$1.time)"; grep -E "^ *[0-9]+ " $R/show_$1.txt | head -n 12 | cut -c1-150
}
tune mlp_1024x4096x1024_gelu_tanh_bf16 1024,4096,1024 gelu_tanh bf16 60
tune mlp_128x128x128_silu_bf16 128,128,128 silu bf16 40
tune mlp_64x64x64x64x64x3_relu_fp16 64,64,64,64,64,3 relu fp16 35
( time timeout 150 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --batches 16384,65536,262144 --only eager,compile,max-autotune,mlpgen --budget 140 --json > $R/bench_compile.json 2> $R/bench_compile.txt ) 2> $R/bench_compile.time
grep -v "^\[" $R/bench_compile.txt | tail -n 14; grep real $R/bench_compile.time
( time MLPGEN_TEST_GPU=1 timeout 150 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py::test_activation_helpers_on_the_gpu tests/test_gpu_module.py tests/test_gpu_kernels.py::test_split_many_programs -p no:cacheprovider -rf > $R/gpu_tests_module.txt 2>&1 ) 2> $R/gpu_tests_module.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_module.txt | head -20; grep real $R/gpu_tests_module.time
tar czf $OUT/run19.tgz -C /tmp r19
