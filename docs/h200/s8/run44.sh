#!/bin/bash
# Session 8, first call: run43's checks (GPU module tests incl. the lane with leading batch
# dims; the headline bench), then the launcher probe (what a lane call's host time is left with).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r44; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 120 python3 docs/h200/s8/launcher_probe.py $R/probe 2>&1 | tail -n 60
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu tests/test_gpu_module.py -p no:cacheprovider -rf > $R/gpu_tests_module.txt 2>&1 ) 2> $R/gpu_tests_module.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_module.txt | head -20; grep real $R/gpu_tests_module.time
( time timeout 60 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --no-compile --json > $R/bench_headline.json 2> $R/bench_headline.txt ) 2> $R/bench_headline.time
grep -v "^\[" $R/bench_headline.txt | grep -E "^ *[0-9]+ |^per-call|^GPU" | head -n 22 | cut -c1-90
tar czf $OUT/run44.tgz -C /tmp r44
