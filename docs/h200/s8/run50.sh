#!/bin/bash
# Session 8, the last device minutes: torch.compile(fullgraph=True) over a module whose bucket
# runs chain (its kernels launched by the op through wrap_triton), beside the layered case.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r50; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu tests/test_gpu_module.py -k "compile_fullgraph_runs" -p no:cacheprovider -rf > $R/gpu_tests_compile.txt 2>&1 ) 2> $R/gpu_tests_compile.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_compile.txt | head -20; grep real $R/gpu_tests_compile.time
tar czf $OUT/run50.tgz -C /tmp r50
