#!/bin/bash
# Session 14, fourth call: every GPU test on the final code and the re-tuned tables (the shipped
# winners' test runs the headline's new cluster graph cells), then the headline's graph replays
# at 1-64 rows side by side with eager's (dsred_probe's replay table, the shipped kernels).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r104; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt
( time MLPGEN_TEST_GPU=1 timeout 420 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -20 | cut -c1-300; grep real $R/gpu_tests.time
tar czf $OUT/run104.tgz -C /tmp r104
