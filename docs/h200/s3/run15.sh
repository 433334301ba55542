#!/bin/bash
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r15; mkdir -p $R; M=tuned/mlp_256x512x256_gelu_fp16.py
( time timeout 150 mlpgen retune $M --batches 4096,16384 --json > $R/retune_large.json 2> $R/retune_large.err ) 2> $R/retune_large.time
tail -1 $R/retune_large.err | cut -c1-200; grep real $R/retune_large.time
rm -f tuned/*.db; cp $M tuned/*.trials.json $R/; mlpgen show $M > $R/show_headline.txt 2>&1; sed -n 4,18p $R/show_headline.txt
( time timeout 100 mlpgen bench $M --batches 4096,16384 --no-compile --json > $R/bench_large.json 2> $R/bench_large.txt ) 2> $R/bench.time
grep -v "^\[" $R/bench_large.txt | tail -12; grep real $R/bench.time
tar czf $OUT/run15.tgz -C /tmp r15
