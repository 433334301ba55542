#!/bin/bash
# Session 7, last call: lanes for every strategy (plan lanes for the torch path, layered and
# stream_tma); GPU module + tune tests; the headline and 1024,4096,1024 (torch path at 1024)
# benched again.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r42; mkdir -p $R
b() {  # name timeout
  ( time timeout $2 mlpgen bench tuned/$1.py --no-compile --json > $R/bench_$1.json 2> $R/bench_$1.txt ) 2> $R/bench_$1.time
  echo "== $1 $(grep real $R/bench_$1.time)"; grep -v "^\[" $R/bench_$1.txt | grep -E "^ *[0-9]+ |^per-call|^GPU" | head -n 12 | cut -c1-90
}
b mlp_1024x4096x1024_gelu_tanh_bf16 45
b mlp_256x512x256_gelu_fp16 45
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu tests/test_gpu_module.py tests/test_gpu_tune.py -p no:cacheprovider -rf > $R/gpu_tests_module_tune.txt 2>&1 ) 2> $R/gpu_tests_module_tune.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_module_tune.txt | head -20; grep real $R/gpu_tests_module_tune.time
tar czf $OUT/run42.tgz -C /tmp r42
