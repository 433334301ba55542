#!/bin/bash
# Session 21, second call: layered's calls in the native lane (its hidden layers' kernels and
# its last layer's cuBLAS GEMM by ATen, one C++ call). Its GPU tests and the other native-lane
# ones, then the buckets where layered's GPU time beat the call winner's score but its host time
# (the Python plan lane) kept it from winning, re-tuned in place: the headline at 1024 and 4096
# rows, 1024,4096,1024 bf16 at 1024; benches of both.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r155; mkdir -p $R/tuned
( time MLPGEN_TEST_GPU=1 timeout 170 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_module.py -k "native_lane or take_the_lane" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
( time timeout 110 mlpgen --widths 256,512,256 --act gelu --batches 1024,4096 --trials 24 --timeout 90 --out tuned > $R/tune_headline.txt 2>&1 ) 2> $R/tune_headline.time
tail -1 $R/tune_headline.txt | cut -c1-200; grep real $R/tune_headline.time
( time timeout 80 mlpgen --widths 1024,4096,1024 --act gelu_tanh --dtype bf16 --batches 1024 --trials 16 --timeout 60 --out tuned > $R/tune_bf16.txt 2>&1 ) 2> $R/tune_bf16.time
tail -1 $R/tune_bf16.txt | cut -c1-200; grep real $R/tune_bf16.time
cp tuned/mlp_256x512x256_gelu_fp16.py tuned/mlp_256x512x256_gelu_fp16.trials.json tuned/mlp_1024x4096x1024_gelu_tanh_bf16.py tuned/mlp_1024x4096x1024_gelu_tanh_bf16.trials.json $R/tuned/
mlpgen show tuned/mlp_256x512x256_gelu_fp16.py | sed -n 3,16p; mlpgen show tuned/mlp_1024x4096x1024_gelu_tanh_bf16.py | sed -n 3,10p
timeout 60 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --no-compile --batches 1024,4096 --json > $R/bench_headline.json 2> $R/bench_headline.txt; tail -12 $R/bench_headline.txt
timeout 50 mlpgen bench tuned/mlp_1024x4096x1024_gelu_tanh_bf16.py --no-compile --batches 1024 --json > $R/bench_bf16.json 2> $R/bench_bf16.txt; tail -8 $R/bench_bf16.txt
tar czf $OUT/run155.tgz -C /tmp r155
