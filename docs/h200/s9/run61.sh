#!/bin/bash
# Session 9, last call: the shipped headline (run60's tune, winners picked again under the
# per-launch-path floor) benched, and its per-call time with out=.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r61; mkdir -p $R; N=mlp_256x512x256_gelu_fp16
( time timeout 90 mlpgen bench tuned/$N.py --no-compile --json --plot $R/bench_headline.png > $R/bench_headline.json 2> $R/bench_headline.txt ) 2> $R/bench_headline.time
grep -v "^\[" $R/bench_headline.txt | grep -E "^ *[0-9]+ |^per-call|^GPU|^note" | head -n 30 | cut -c1-100
( time timeout 60 python3 docs/h200/s9/out_probe.py $R > $R/out_probe.txt 2> $R/out_probe.err ) 2> $R/out_probe.time
cat $R/out_probe.txt; tail -n 2 $R/out_probe.err
tar czf $OUT/run61.tgz -C /tmp r61
