#!/bin/bash
# Session 24, fifth call (warm machine): the shipped headline benched at 1 / 64 / 256 / 1024 rows
# without torch.compile.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
R=$OUT/run175; mkdir -p $R
( time timeout 150 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --no-compile --batches 1,64,256,1024 --json > $R/bench_headline.json 2> $R/bench_headline.txt ) 2> $R/bench.time
grep -v "^\[" $R/bench_headline.txt | tail -14; grep real $R/bench.time
