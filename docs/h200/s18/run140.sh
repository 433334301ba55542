#!/bin/bash
# Session 18, third call: why the split-k last layer is slow at 1024 rows (SPLITK_PROBE=why:
# without PDL, and the last layer alone), then the GPU tests of the kernels and the native lane.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r140; mkdir -p $R
SPLITK_PROBE=why timeout 150 python3 docs/h200/s18/splitk_probe.py $R > $R/why.log 2>&1; echo "why rc $?"
grep -v Warning $R/why.log | tail -16 | cut -c1-200
( time MLPGEN_TEST_GPU=1 timeout 380 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py tests/test_native.py > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -20 | cut -c1-300; grep real $R/gpu_tests.time
rm -f $R/probe_chain*.py
tar czf $OUT/run140.tgz -C /tmp r140
