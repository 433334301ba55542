#!/bin/bash
# Written in session 27 for the next session; session 28 ran it as part of s28/run199.sh. 784,1024,1024,10
# fp32's 64 and 1024-row cells run persist without PDL. They were tuned (run172) while persist
# released the next kernel at its start (the headline's persist took 1.11-1.13x its plain GPU
# time so at 1024 rows, run142 and run144); since session 26 it releases after its last barrier
# (0.91x at the headline's 1024 rows, run189).
# Re-tuned, so that the PDL pass measures them with the late release, and benched.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run198; mkdir -p $R
F=tuned/mlp_784x1024x1024x10_relu_fp32
S=$SECONDS
timeout 160 mlpgen --widths 784,1024,1024,10 --act relu --dtype fp32 --batches 64,1024 --trials 32 --timeout 125 --out tuned > $R/tune_fp32.txt 2>&1
echo "tune rc $? $((SECONDS-S)) s" | tee -a $R/tune_fp32.txt; tail -1 $R/tune_fp32.txt | cut -c1-200
cp $F.py $F.trials.json $R/
mlpgen show $F.py > $R/show_fp32.txt; grep -E "^ *(64|1024) |graph" $R/show_fp32.txt | head -6
S=$SECONDS
timeout 80 mlpgen bench $F.py --no-compile --batches 64,1024 --json > $R/bench_fp32.json 2> $R/bench_fp32.txt
echo "bench rc $? $((SECONDS-S)) s" | tee -a $R/bench_fp32.txt; grep -v "^\[" $R/bench_fp32.txt | grep -E "^ *(batch|[0-9]+ )|^per-call|^GPU time" | cut -c1-160
