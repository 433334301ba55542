#!/bin/bash
# Session 18, fourth call: the rest of the GPU tests (the generated module on the GPU: lanes,
# torch.compile, CUDA-graph capture, autograd, opcheck; the tuner on the GPU).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r141; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 500 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_module.py tests/test_gpu_tune.py > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -20 | cut -c1-300; grep real $R/gpu_tests.time
tar czf $OUT/run141.tgz -C /tmp r141
