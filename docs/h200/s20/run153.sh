#!/bin/bash
# Session 20, sixth call: chain's layers launched by one native-lane call. Its GPU tests (and
# the other lanes', and the re-rendered shipped modules'), then the two buckets where chain's
# per-call host time had kept it from winning, re-tuned in place: the headline at 1024 rows,
# 1024,4096,1024 bf16 at 64.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r153; mkdir -p $R/tuned
( time MLPGEN_TEST_GPU=1 timeout 110 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_module.py tests/test_gpu_kernels.py -k "native_lane or take_the_lane or shipped" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
( time timeout 75 mlpgen --widths 256,512,256 --act gelu --batches 1024 --trials 16 --timeout 45 --out tuned > $R/tune_headline.txt 2>&1 ) 2> $R/tune_headline.time
tail -1 $R/tune_headline.txt | cut -c1-200; grep real $R/tune_headline.time
( time timeout 75 mlpgen --widths 1024,4096,1024 --act gelu_tanh --dtype bf16 --batches 64 --trials 16 --timeout 45 --out tuned > $R/tune_bf16.txt 2>&1 ) 2> $R/tune_bf16.time
tail -1 $R/tune_bf16.txt | cut -c1-200; grep real $R/tune_bf16.time
cp tuned/mlp_256x512x256_gelu_fp16.* tuned/mlp_1024x4096x1024_gelu_tanh_bf16.* $R/tuned/
mlpgen show tuned/mlp_256x512x256_gelu_fp16.py | sed -n 3,14p; mlpgen show tuned/mlp_1024x4096x1024_gelu_tanh_bf16.py | sed -n 3,10p
tar czf $OUT/run153.tgz -C /tmp r153
