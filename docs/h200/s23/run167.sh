#!/bin/bash
# Session 23, fourth call: every GPU test on the final code (persist's new barrier, the re-tuned tables).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/run167; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/gpu.txt
( time MLPGEN_TEST_GPU=1 timeout 570 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs --durations=10 tests/ > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
cat $R/gpu.txt; grep -E "^(FAILED|SKIPPED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -20 | cut -c1-300; grep real $R/gpu_tests.time
tar czf $OUT/run167.tgz -C /tmp run167
