#!/bin/bash
# Session 7, first call: per-call host cost of a kernel run through a CUDA graph whose
# kernel-node arguments are updated per call, and straight through cuLaunchKernel
# (launch_probe.py), against the module plan path (triton launcher).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r37; mkdir -p $R
timeout 200 python3 docs/h200/s7/launch_probe.py $R/probe > $R/launch_probe.out 2>&1; tail -n 40 $R/launch_probe.out | cut -c1-160
rm -rf $R/probe/work
tar czf $OUT/run37.tgz -C /tmp r37
