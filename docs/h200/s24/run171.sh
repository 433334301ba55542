#!/bin/bash
# Session 24, first call: persist's tiles outside the space's domain at the headline's 1024 and
# 4096 rows (persist_tiles_probe.py); the 784,1024,1024,10 fp32 module's 16384 and 262144 rows
# re-tuned with session 23's grid barrier.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run171; mkdir -p $R/tuned
timeout 330 python3 docs/h200/s24/persist_tiles_probe.py /tmp/tiles 1024 4096 > $R/tiles.log 2>&1; echo "tiles rc $?"
cp /tmp/tiles/tiles.txt $R/ 2>/dev/null; grep -v "^checked" $R/tiles.log | grep -v Warning | tail -20
W=tuned/mlp_784x1024x1024x10_relu_fp32
( time timeout 200 mlpgen --widths 784,1024,1024,10 --act relu --dtype fp32 --batches 16384,262144 --trials 16 --timeout 120 --out tuned > $R/tune_fp32.txt 2>&1 ) 2> $R/tune_fp32.time
tail -1 $R/tune_fp32.txt | cut -c1-200; grep real $R/tune_fp32.time
cp $W.py $W.trials.json $R/tuned/
mlpgen show $W.py > $R/show_fp32.txt; grep -E "^ *(16384|262144) " $R/show_fp32.txt | head -4
