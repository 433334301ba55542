#!/bin/bash
# Session 8, second call: the second lane (parameter checks cached, triton 3.6's C launch
# called directly) A/B against the session-7 lane, the lane tests on triton 3.6 (interpreter:
# the real launcher class is recognised), GPU module + tune tests, the headline and the public
# matrix benched with the new templates.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r45; mkdir -p $R
timeout 120 python3 -m pytest -q tests/test_lane.py -p no:cacheprovider 2>&1 | tail -n 3
timeout 150 python3 docs/h200/s8/lane2_ab_probe.py $R/probe 2>&1 | tail -n 12
( time MLPGEN_TEST_GPU=1 timeout 240 python3 -m pytest -q -m gpu tests/test_gpu_module.py tests/test_gpu_tune.py -p no:cacheprovider -rf > $R/gpu_tests_module_tune.txt 2>&1 ) 2> $R/gpu_tests_module_tune.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_module_tune.txt | head -20; grep real $R/gpu_tests_module_tune.time
b() {  # name timeout
  ( time timeout $2 mlpgen bench tuned/$1.py --no-compile --json > $R/bench_$1.json 2> $R/bench_$1.txt ) 2> $R/bench_$1.time
  echo "== $1 $(grep real $R/bench_$1.time)"; grep -v "^\[" $R/bench_$1.txt | grep -E "^ *[0-9]+ |^per-call|^GPU" | head -n 22 | cut -c1-90
}
b mlp_256x512x256_gelu_fp16 60
b mlp_64x64x64x64x64x3_relu_fp16 50
b mlp_128x128x128_silu_bf16 50
b mlp_784x1024x1024x10_relu_fp32 60
b mlp_1024x4096x1024_gelu_tanh_bf16 60
tar czf $OUT/run45.tgz -C /tmp r45
