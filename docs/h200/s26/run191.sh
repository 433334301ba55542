#!/bin/bash
# Written in session 26 (not run: no device time left), run in session 27: the fp32
# public-matrix spec's batch-1 cell (persist with PDL, measured before the release moved)
# re-tuned and benched. (Session 26's version also benched the headline with every contender;
# session 27 runs that in a later call of its own.)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run191; mkdir -p $R/tuned
F=tuned/mlp_784x1024x1024x10_relu_fp32
( time timeout 100 mlpgen --widths 784,1024,1024,10 --act relu --dtype fp32 --batches 1 --trials 32 --timeout 90 --out tuned > $R/tune_fp32.txt 2>&1 ) 2> $R/tune_fp32.time
tail -1 $R/tune_fp32.txt | cut -c1-200; grep real $R/tune_fp32.time
cp $F.py $F.trials.json $R/tuned/
mlpgen show $F.py | grep -E "^ *1 |graph" | head -3
timeout 60 mlpgen bench $F.py --no-compile --batches 1 --json > $R/bench_fp32.json 2> $R/bench_fp32.txt
grep -v "^\[" $R/bench_fp32.txt | grep -E "^ *(batch|[0-9]+ )|^per-call|^GPU time" | cut -c1-130
cd $OUT && tar czf run191.tgz run191 && rm -rf run191
