#!/bin/bash
# Session 11: chain's kernels after the first load their weight tile and bias before waiting for
# the previous layer (layout.chain_preloads): old and new renders of the headline's CUDA-graph
# winners, A/B in one process (docs/h200/s11/chain_preload_probe.py); then the GPU tests of
# chain and of every shipped module's winners on the new renders.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r82; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader > $R/gpu.txt
timeout 200 python3 docs/h200/s11/chain_preload_probe.py > $R/chain_preload.txt 2> $R/chain_preload.err
echo "rc $?" >> $R/chain_preload.txt
cat $R/gpu.txt $R/chain_preload.txt; tail -n 6 $R/chain_preload.err | cut -c1-400
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rf tests/test_gpu_kernels.py \
    -k "chain or shipped_winners" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
tar czf $OUT/run82.tgz -C /tmp r82
