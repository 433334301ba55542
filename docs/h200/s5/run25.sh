#!/bin/bash
# Session 5, call 4: TMA stream with descriptors made on the host or in the kernel (tma_probe4.py),
# then the module GPU tests with the packed fp16 activations.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r25; mkdir -p $R
( time timeout 120 python3 .probe/tma_probe4.py $R > $R/tma_probe4.txt 2>&1 ) 2> $R/tma_probe4.time
grep "M=" $R/tma_probe4.txt | cut -c1-160; grep real $R/tma_probe4.time; grep -B2 -A6 "Error" $R/tma_probe4.txt | head -20
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu tests/test_gpu_module.py -p no:cacheprovider -rf > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
tar czf $OUT/run25.tgz -C /tmp r25
