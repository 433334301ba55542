#!/bin/bash
# Session 5's second GPU call: the fused kernel's epilogue (GELU in fp32 vs f16x2 vs none) and
# tiles that let two programs share an SM (tma_probe3.py), then the module and tuner GPU tests.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r23; mkdir -p $R
( time timeout 240 python3 .probe/tma_probe3.py $R > $R/tma_probe3.txt 2>&1 ) 2> $R/tma_probe3.time
grep "M=" $R/tma_probe3.txt | cut -c1-150; grep real $R/tma_probe3.time; grep -B2 -A8 Error $R/tma_probe3.txt | head -30
( time MLPGEN_TEST_GPU=1 timeout 300 python3 -m pytest -q -m gpu tests/test_gpu_tune.py tests/test_gpu_module.py -p no:cacheprovider -rf > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
tar czf $OUT/run23.tgz -C /tmp r23
