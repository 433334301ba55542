#!/bin/bash
# Session 10: run70 again after __call__ and forward share _module_call (no forward frame, one compile check); old = the render at e4db7ad (before __call__), then the module GPU tests
# (docs/h200/s10/call_probe.py: old and new renders of the headline interleaved).

python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r71; mkdir -p $R
( time timeout 150 python3 docs/h200/s10/call_probe.py $R 25 0.006 > $R/call_probe.txt 2> $R/call_probe.err ) 2> $R/call_probe.time
cat $R/call_probe.txt; tail -n 4 $R/call_probe.err | cut -c1-300; grep real $R/call_probe.time
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rf tests/test_gpu_module.py > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
tar czf $OUT/run71.tgz -C /tmp r71
