#!/bin/bash
# Session 8, the device time left: the shipped headline's 16384-row bucket searched exhaustively
# in place (run47's fresh search measured 40 of its 109 candidates, not run40's winner); the
# other buckets are kept (the tuner merges).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r51; mkdir -p $R
( time timeout 170 mlpgen --widths 256,512,256 --act gelu --batches 16384 --exhaustive --json > $R/tune_16384.json 2> $R/tune_16384.err ) 2> $R/tune_16384.time
tail -n 1 $R/tune_16384.err | cut -c1-200; grep real $R/tune_16384.time
mlpgen show tuned/mlp_256x512x256_gelu_fp16.py 2>&1 | sed -n 4,20p | cut -c1-150
cp tuned/mlp_256x512x256_gelu_fp16.py tuned/mlp_256x512x256_gelu_fp16.trials.json $R/ 2>/dev/null
tar czf $OUT/run51.tgz -C /tmp r51
