#!/bin/bash
# Session 12 (run as one command line on the warm machine after run84): loop_probe.py, whether a
# loop of native-lane calls waits for the host or the GPU (its profiler trace slowed the host
# for the rest of the process: only the kernel durations are used).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export MLPGEN_CACHE=/tmp/mlpgen_cache; mkdir -p $OUT/r85
timeout 200 python3 docs/h200/s12/loop_probe.py $OUT/r85 2>&1 | tail -20
