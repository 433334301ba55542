#!/bin/bash
# Session 4's first GPU call: what session 3 could not run (see its closing note), plus
# the GELU variants' cost.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r17; mkdir -p $R; M=tuned/mlp_256x512x256_gelu_fp16.py
timeout 90 python3 .probe/gelu_probe.py $R > $R/gelu_probe.txt 2>&1; tail -n 4 $R/gelu_probe.txt
( time MLPGEN_TEST_GPU=1 timeout 330 python3 -m pytest -q -m gpu tests/test_gpu_tune.py tests/test_gpu_module.py tests/test_gpu_kernels.py -p no:cacheprovider -rf > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests.txt | head -30; grep real $R/gpu_tests.time
( time timeout 110 mlpgen bench $M --batches 1,64,256,1024,4096 --only eager+graph,mlpgen+graph --no-compile --json > $R/bench_graph.json 2> $R/bench_graph.txt ) 2> $R/bench.time
grep -v "^\[" $R/bench_graph.txt | tail -16
tar czf $OUT/run17.tgz -C /tmp r17
