#!/bin/bash
# Session 28: 1024,4096,1024 bf16's shipped cells at 1 and 64 rows with other pipeline depths,
# after an L2 flush and back to back, beside eager.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run204; mkdir -p $R
S=$SECONDS
timeout 150 python3 docs/h200/s28/cold_stages_probe.py /tmp/run204 > $R/probe.txt 2>&1
echo "probe rc $? $((SECONDS-S)) s" | tee -a $R/probe.txt; grep -E "^\||Error|error" $R/probe.txt | grep -v "^|---" | cut -c1-160
cp /tmp/run204/stages.txt $R/ 2>/dev/null
