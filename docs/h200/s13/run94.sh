#!/bin/bash
# Session 13: run93's two probes again, fixed (split_flag_probe.py's sentinel check took the
# least value; chain_k_probe.py lacked the split domain the tuner asks for): split's hand-over
# without the arrival counter, chain at 1024 rows with larger k steps.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r94; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt
timeout 200 python3 docs/h200/s13/split_flag_probe.py $R/flag > $R/flag.log 2>&1; tail -12 $R/flag.log
( time timeout 200 python3 docs/h200/s13/chain_k_probe.py $R/chaink > $R/chaink.txt 2> $R/chaink.err ) 2> $R/chaink.time
cat $R/chaink.txt | head -12; tail -3 $R/chaink.err; grep real $R/chaink.time
tar czf $OUT/run94.tgz -C /tmp r94
