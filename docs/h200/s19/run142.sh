#!/bin/bash
# Session 19, first call: consecutive calls linked by PDL against plain first launches
# (pdl_calls_probe.py), then the GPU tests of chain and the shipped winners.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r142; mkdir -p $R
timeout 400 python3 docs/h200/s19/pdl_calls_probe.py $R \
  tuned/mlp_256x512x256_gelu_fp16.py:1,16,64,256,1024,4096,16384,262144 \
  tuned/mlp_128x128x128_silu_bf16.py:1,16,64,1024,16384 \
  tuned/mlp_64x64x64x64x64x3_relu_fp16.py:1,64,1024,65536 \
  tuned/mlp_784x1024x1024x10_relu_fp32.py:1,64,1024 > $R/probe.log 2>&1
cut -c1-250 $R/probe.log | tail -40
( time MLPGEN_TEST_GPU=1 timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py -k "chain or shipped" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -20 | cut -c1-300; grep real $R/gpu_tests.time
tar czf $OUT/run142.tgz -C /tmp r142
