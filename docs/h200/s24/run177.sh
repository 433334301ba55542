#!/bin/bash
# Session 24, seventh call: the 784,1024,1024,10 fp32 module re-tuned in run171/run172 benched at
# all of its buckets.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
R=$OUT/run177; mkdir -p $R; n=mlp_784x1024x1024x10_relu_fp32
( time timeout 120 mlpgen bench tuned/$n.py --no-compile --budget 40 --json > $R/bench_$n.json 2> $R/bench_$n.txt ) 2> $R/bench_$n.time
grep -v "^\[" $R/bench_$n.txt | tail -22; grep real $R/bench_$n.time
