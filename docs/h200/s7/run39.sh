#!/bin/bash
# Session 7: the lane on the GPU. GPU module + tune tests (the lane's test among them); the
# per-call A/B against the previous templates (lane_ab_probe.py); the host profile again.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r39; mkdir -p $R
timeout 120 python3 docs/h200/s7/lane_ab_probe.py $R/probe > $R/lane_ab_probe.out 2>&1; tail -n 12 $R/lane_ab_probe.out | cut -c1-160
( time MLPGEN_TEST_GPU=1 timeout 240 python3 -m pytest -q -m gpu tests/test_gpu_module.py tests/test_gpu_tune.py -p no:cacheprovider -rf > $R/gpu_tests_module_tune.txt 2>&1 ) 2> $R/gpu_tests_module_tune.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_module_tune.txt | head -20; grep real $R/gpu_tests_module_tune.time
timeout 120 python3 docs/h200/s7/host_profile_probe.py $R/probe > $R/host_profile_probe.out 2>&1; grep -E "M=|Fused|_lean|mlp|_forward|_execute|run\(|empty" $R/host_profile_probe.out | cut -c1-160
tar czf $OUT/run39.tgz -C /tmp r39
