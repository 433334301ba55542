#!/bin/bash
# Session 5's first GPU call: TMA / warp-specialised GEMMs and a TMA-fed stream kernel against
# the shipped kernels and cuBLAS (tma_probe2.py), then the GPU kernel tests (incl. the wgmma test).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r22; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader
( time timeout 260 python3 .probe/tma_probe2.py $R > $R/tma_probe2.txt 2>&1 ) 2> $R/tma_probe2.time
grep "M=" $R/tma_probe2.txt | cut -c1-160; grep real $R/tma_probe2.time
( time MLPGEN_TEST_GPU=1 timeout 270 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py -p no:cacheprovider -rf > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
tar czf $OUT/run22.tgz -C /tmp r22
