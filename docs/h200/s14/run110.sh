#!/bin/bash
# Session 14, tenth call: after _cluster_metadata_known (cluster cells take the torch path where
# triton packs launch metadata otherwise): the cluster kernels' and the lanes' GPU tests.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r110; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py tests/test_gpu_module.py -k "cluster or shipped" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -20 | cut -c1-300; grep real $R/gpu_tests.time
tar czf $OUT/run110.tgz -C /tmp r110
