#!/bin/bash
# Session 12, first call: the native lane built on the H200 machine, its per-call host time
# against the Python lane and eager (native_probe.py), then the module's GPU tests (with the
# native lane's own) and the shipped-winners test.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1 MLPGEN_CACHE=/tmp/mlpgen_cache
R=/tmp/r83; mkdir -p $R
{ nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader; c++ --version | head -1;
  python3 -c "import torch, triton, sys; print(torch.__version__, triton.__version__, sys.version.split()[0])"; } > $R/env.txt
( time timeout 240 python3 docs/h200/s12/native_probe.py $R > $R/native_probe.txt 2> $R/native_probe.err ) 2> $R/native_probe.time
cat $R/env.txt $R/native_probe.txt; tail -n 8 $R/native_probe.err | cut -c1-600; grep real $R/native_probe.time
( time MLPGEN_TEST_GPU=1 timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider -rf tests/test_gpu_module.py \
    tests/test_gpu_kernels.py::test_shipped_winners_for_this_gpu_are_correct > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests.txt | head -30; grep real $R/gpu_tests.time
tar czf $OUT/run83.tgz -C /tmp r83
