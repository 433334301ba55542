#!/bin/bash
# Session 17, ninth call: the dot-form cluster hand-over with st.async stores completing on the
# owner's mbarrier instead of the second cluster barrier (docs/h200/s17/async_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r136; mkdir -p $R
timeout 200 python3 docs/h200/s17/async_probe.py $R > $R/probe.log 2>&1; echo "probe rc $?"
grep -v Warning $R/probe.log | tail -40 | cut -c1-200
tar czf $OUT/run136.tgz -C /tmp r136
