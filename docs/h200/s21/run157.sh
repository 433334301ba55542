#!/bin/bash
# Session 21, last call: GEMM steps by cuBLASLt itself in the native lane (layered's last layer,
# the epilogue strategy's layers). Its GPU tests and the other native-lane ones, then the buckets
# where layered or the epilogue strategy had the least GPU time but lost on host time, re-tuned
# in place, and benches of them.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r157; mkdir -p $R/tuned
( time MLPGEN_TEST_GPU=1 timeout 100 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_module.py -k "native_lane or take_the_lane" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
( time timeout 70 mlpgen --widths 256,512,256 --act gelu --batches 4096 --trials 20 --timeout 50 --out tuned > $R/tune_headline.txt 2>&1 ) 2> $R/tune_headline.time
tail -1 $R/tune_headline.txt | cut -c1-200; grep real $R/tune_headline.time
( time timeout 100 mlpgen --widths 1024,4096,1024 --act gelu_tanh --dtype bf16 --batches 64,1024 --trials 16 --timeout 80 --out tuned > $R/tune_bf16.txt 2>&1 ) 2> $R/tune_bf16.time
tail -1 $R/tune_bf16.txt | cut -c1-200; grep real $R/tune_bf16.time
( time timeout 60 mlpgen --widths 784,1024,1024,10 --act relu --dtype fp32 --batches 1 --trials 16 --timeout 40 --out tuned > $R/tune_fp32.txt 2>&1 ) 2> $R/tune_fp32.time
tail -1 $R/tune_fp32.txt | cut -c1-200; grep real $R/tune_fp32.time
cp tuned/mlp_256x512x256_gelu_fp16.py tuned/mlp_256x512x256_gelu_fp16.trials.json tuned/mlp_1024x4096x1024_gelu_tanh_bf16.py tuned/mlp_1024x4096x1024_gelu_tanh_bf16.trials.json tuned/mlp_784x1024x1024x10_relu_fp32.py tuned/mlp_784x1024x1024x10_relu_fp32.trials.json $R/tuned/
mlpgen show tuned/mlp_256x512x256_gelu_fp16.py | sed -n 3,18p; mlpgen show tuned/mlp_1024x4096x1024_gelu_tanh_bf16.py | sed -n 3,10p; mlpgen show tuned/mlp_784x1024x1024x10_relu_fp32.py | sed -n 3,10p
timeout 40 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --no-compile --batches 1024,4096 --json > $R/bench_headline.json 2> $R/bench_headline.txt; tail -12 $R/bench_headline.txt
timeout 40 mlpgen bench tuned/mlp_1024x4096x1024_gelu_tanh_bf16.py --no-compile --batches 64,1024 --json > $R/bench_bf16.json 2> $R/bench_bf16.txt; tail -12 $R/bench_bf16.txt
timeout 30 mlpgen bench tuned/mlp_784x1024x1024x10_relu_fp32.py --no-compile --batches 1 --json > $R/bench_fp32.json 2> $R/bench_fp32.txt; tail -9 $R/bench_fp32.txt
tar czf $OUT/run157.tgz -C /tmp r157
