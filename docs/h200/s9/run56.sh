#!/bin/bash
# Session 9, fifth call: split and chain tiles outside the shipped domains for the headline's
# 1-, 64- and 1024-row buckets (exhaustive tuner runs with pinned domains; docs/h200/s9/domain_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r56; mkdir -p $R
( time timeout 480 python3 docs/h200/s9/domain_probe.py $R/probe > $R/domain_probe.txt 2> $R/domain_probe.err ) 2> $R/domain_probe.time
grep -E "^==|^  " $R/domain_probe.txt; tail -n 2 $R/domain_probe.err | cut -c1-200; grep real $R/domain_probe.time
tar czf $OUT/run56.tgz -C /tmp r56
