#!/bin/bash
# Session 12, second call: the module's lane tests again (the native lane's test mended), then
# the shipped headline benched with the native lane (mlpgen bench, as run61), and the public
# matrix's four modules benched the same way.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1 MLPGEN_CACHE=/tmp/mlpgen_cache
R=/tmp/r84; mkdir -p $R; N=mlp_256x512x256_gelu_fp16
( time MLPGEN_TEST_GPU=1 timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider -rf tests/test_gpu_module.py -k lane > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
( time timeout 120 mlpgen bench tuned/$N.py --no-compile --json --plot $R/bench_headline.png > $R/bench_headline.json 2> $R/bench_headline.txt ) 2> $R/bench_headline.time
grep -v "^\[" $R/bench_headline.txt | grep -E "^ *[0-9]+ |^per-call|^GPU|^note" | head -n 30 | cut -c1-110; grep real $R/bench_headline.time
for N in mlp_64x64x64x64x64x3_relu_fp16 mlp_128x128x128_silu_bf16 mlp_784x1024x1024x10_relu_fp32 mlp_1024x4096x1024_gelu_tanh_bf16; do
  ( time timeout 100 mlpgen bench tuned/$N.py --no-compile --json > $R/bench_$N.json 2> $R/bench_$N.txt ) 2> $R/bench_$N.time
  echo "== $N"; grep -v "^\[" $R/bench_$N.txt | grep -E "^ *[0-9]+ " | head -n 12 | cut -c1-110; grep real $R/bench_$N.time
done
tar czf $OUT/run84.tgz -C /tmp r84
