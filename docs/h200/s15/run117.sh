#!/bin/bash
# Session 15, seventh call: the final code and run116's table: the GPU tests of the shipped,
# cluster, lane and graph paths, then every contender (torch.compile's two modes too) at 1, 16,
# 64 and 1024 rows, and the bench twice more without torch.compile.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r117; mkdir -p $R
H=mlp_256x512x256_gelu_fp16
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py tests/test_gpu_module.py tests/test_native.py tests/test_gpu_tune.py -k "shipped or lane or native or own_kernel or graph or capture" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
( time timeout 150 mlpgen bench tuned/$H.py --batches 1,16,64,1024 --json --plot $R/bench.png > $R/bench_all.json 2> $R/bench_all.txt ) 2> $R/bench_all.time
grep -v "^\[" $R/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|note|per-call|GPU time" | tail -n 24 | cut -c1-160; grep real $R/bench_all.time
for i in 1 2; do
  timeout 60 mlpgen bench tuned/$H.py --no-compile --batches 1,16,64,1024 --json > $R/bench$i.json 2> $R/bench$i.txt
  echo "== bench $i"; grep -v "^\[" $R/bench$i.txt | grep -E "^ *(batch|[0-9]+ )|per-call|GPU time" | head -7 | cut -c1-120
done
tar czf $OUT/run117.tgz -C /tmp r117
