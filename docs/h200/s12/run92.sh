#!/bin/bash
# Session 12 (run as one command line on the machine run91 left warm): native_probe.py again, and
# the bench at 1024 rows alone (run91's short bench had measured 14.2 us per call there).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export MLPGEN_CACHE=/tmp/mlpgen_cache; mkdir -p $OUT/r92
timeout 100 python3 docs/h200/s12/native_probe.py $OUT/r92 2>&1 | tail -5
timeout 60 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --batches 1024 --only eager,mlpgen --no-compile 2>&1 | grep -E "^ *1024 " | head -2
