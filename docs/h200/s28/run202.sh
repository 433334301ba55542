#!/bin/bash
# Session 28: what bench's do_bench GPU time is made of at small batches (the L2 flush, the
# launch, the call's kernels), the headline at 1 / 64 / 1024 rows and 1024,4096,1024 bf16 at 1 / 64.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run202; mkdir -p $R
S=$SECONDS
timeout 400 python3 docs/h200/s28/do_bench_probe.py $R > $R/probe.txt 2>&1
echo "probe rc $? $((SECONDS-S)) s" | tee -a $R/probe.txt; grep -E "^\||Error|error" $R/probe.txt | grep -v "^|---" | cut -c1-160
