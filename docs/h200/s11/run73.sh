#!/bin/bash
# Session 11, first call: the warp-specialised Gluon kernel (docs/h200/s11/gluon_mlp.py) checked
# and timed against the shipped headline's large-batch kernels and eager (gluon_probe.py); then
# the module's GPU tests (lane, torch.compile, CUDA graphs, the subclass guard of __call__) and
# the shipped-winners test.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r73; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader > $R/gpu.txt
( time timeout 330 python3 docs/h200/s11/gluon_probe.py $R > $R/gluon_probe.txt 2> $R/gluon_probe.err ) 2> $R/gluon_probe.time
cat $R/gpu.txt $R/gluon_probe.txt; tail -n 6 $R/gluon_probe.err | cut -c1-400; grep real $R/gluon_probe.time
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rf tests/test_gpu_module.py \
    tests/test_gpu_kernels.py::test_shipped_winners_for_this_gpu_are_correct > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
tar czf $OUT/run73.tgz -C /tmp r73
