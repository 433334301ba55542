#!/bin/bash
# NOT RUN (written at the end of session 6, whose device time was spent): the next session's
# first call: per-call host cost through a CUDA graph whose kernel-node arguments are updated
# per call (graph_params_probe.py), against the module's plan path.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r36; mkdir -p $R
timeout 200 python3 docs/h200/s6/graph_params_probe.py $R/probe > $R/graph_params_probe.out 2>&1; tail -n 30 $R/graph_params_probe.out | cut -c1-160
rm -rf $R/probe/work
tar czf $OUT/run36.tgz -C /tmp r36
