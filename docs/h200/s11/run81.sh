#!/bin/bash
# Session 11: the headline's GPU time at 1024 rows taken apart (docs/h200/s11/chain_parts_probe.py):
# the shipped chain kernels together and apart, an empty kernel, persist and eager.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r81; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader > $R/gpu.txt
timeout 200 python3 docs/h200/s11/chain_parts_probe.py $R > $R/out.txt 2> $R/err.txt
echo "rc $?" >> $R/out.txt
cat $R/gpu.txt $R/out.txt; tail -n 6 $R/err.txt | cut -c1-400
tar czf $OUT/run81.tgz -C /tmp r81
