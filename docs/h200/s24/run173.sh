#!/bin/bash
# Session 24, third call (the machine of run172, still warm): run172's two tunes again on their
# Optuna journals (the studies are complete: the winners re-read, nothing searched again), so
# that the tuned modules come back; then the headline with every contender at every bucket.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/run173; mkdir -p $R/tuned
H=tuned/mlp_256x512x256_gelu_fp16; W=tuned/mlp_784x1024x1024x10_relu_fp32
ls -la tuned/*.journal > $R/journals.txt
( time timeout 120 mlpgen --widths 256,512,256 --act gelu --batches 256,1024 --trials 48 --timeout 170 --out tuned > $R/tune_headline.txt 2>&1 ) 2> $R/tune_headline.time
tail -1 $R/tune_headline.txt | cut -c1-200; grep real $R/tune_headline.time
( time timeout 120 mlpgen --widths 784,1024,1024,10 --act relu --dtype fp32 --batches 1,64,1024 --trials 32 --timeout 125 --out tuned > $R/tune_fp32.txt 2>&1 ) 2> $R/tune_fp32.time
tail -1 $R/tune_fp32.txt | cut -c1-200; grep real $R/tune_fp32.time
cp $H.py $H.trials.json $W.py $W.trials.json $R/tuned/
mlpgen show $H.py > $R/show_headline.txt; mlpgen show $W.py > $R/show_fp32.txt
grep -E "^ *(256|1024) |graph" $R/show_headline.txt | head -6; grep -E "^ *(1|64|1024) |graph" $R/show_fp32.txt | head -5
cd /tmp && tar czf $OUT/run173.tgz run173 && cd - >/dev/null
B=$OUT/bench; mkdir -p $B
( time timeout 320 mlpgen bench $H.py --json --plot $B/bench_all.png > $B/bench_all.json 2> $B/bench_all.txt ) 2> $B/bench_all.time
grep -v "^\[" $B/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|^per-call|^GPU time" | tail -n 24 | cut -c1-160; grep real $B/bench_all.time
