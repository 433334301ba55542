#!/bin/bash
# Session 15, eighth call: the public matrix's 128,128,128 silu bf16 re-tuned at 1, 16 and 64 rows
# (16 trials a bucket, in place) now that one-row cluster tiles are searched (4 and 2 CTAs a
# cluster there).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r118; mkdir -p $R/tuned
T=mlp_128x128x128_silu_bf16
( time timeout 110 mlpgen --widths 128,128,128 --act silu --dtype bf16 --batches 1,16,64 --trials 16 --timeout 70 --out tuned --json > $R/tune_$T.json 2> $R/tune_$T.err ) 2> $R/tune_$T.time
echo "== tune $T $(grep real $R/tune_$T.time)"; tail -n 1 $R/tune_$T.err | cut -c1-160
rm -f tuned/*.journal*; mlpgen show tuned/$T.py > $R/show_$T.txt 2>&1; sed -n 3,9p $R/show_$T.txt | cut -c1-140
cp tuned/$T.py tuned/$T.trials.json $R/tuned/
tar czf $OUT/run118.tgz -C /tmp r118
