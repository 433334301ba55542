#!/bin/bash
# Session 19, fifth call: two public-matrix modules re-tuned at their small buckets with the
# tuner's PDL pass, then the shipped winners' GPU test.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r146; mkdir -p $R/tuned
( time timeout 150 mlpgen --widths 128,128,128 --act silu --dtype bf16 --batches 1,16,64,1024 --out tuned > $R/tune_silu.txt 2>&1 ) 2> $R/tune_silu.time
tail -2 $R/tune_silu.txt | cut -c1-200; grep real $R/tune_silu.time
( time timeout 150 mlpgen --widths 64,64,64,64,64,3 --act relu --batches 1,64,1024 --out tuned > $R/tune_relu.txt 2>&1 ) 2> $R/tune_relu.time
tail -2 $R/tune_relu.txt | cut -c1-200; grep real $R/tune_relu.time
cp tuned/mlp_128x128x128_silu_bf16.* tuned/mlp_64x64x64x64x64x3_relu_fp16.* $R/tuned/
MLPGEN_TEST_GPU=1 timeout 100 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py -k "shipped" > $R/gpu_tests.txt 2>&1
grep -E "^(FAILED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -8 | cut -c1-300
mlpgen show tuned/mlp_128x128x128_silu_bf16.py | head -12; mlpgen show tuned/mlp_64x64x64x64x64x3_relu_fp16.py | head -10
tar czf $OUT/run146.tgz -C /tmp r146
