#!/bin/bash
# Written in session 28 for the next session (not run: no device time left). chain's space now
# has 4 stages (run204: 1024,4096,1024's 64-row chain tile took 15.22 us with 4 stages against
# 15.51 with 3 back to back, 22.18 against 26.05 after an L2 flush). Re-tunes that spec at 64
# and 1024 rows with it, benches the module, and runs the shipped modules' GPU tests.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run205; mkdir -p $R
F=tuned/mlp_1024x4096x1024_gelu_tanh_bf16
S=$SECONDS
timeout 220 mlpgen --widths 1024,4096,1024 --act gelu_tanh --dtype bf16 --batches 64,1024 --trials 32 --timeout 170 --out tuned > $R/tune_wide.log 2>&1
echo "tune rc $? $((SECONDS-S)) s" | tee -a $R/tune_wide.log; tail -1 $R/tune_wide.log | cut -c1-200
cp $F.py $F.trials.json $R/
mlpgen show $F.py > $R/show_wide.txt; grep -E "^ *(64|1024) |graph" $R/show_wide.txt | head -6
S=$SECONDS
timeout 80 mlpgen bench $F.py --no-compile --json > $R/bench_wide.json 2> $R/bench_wide.log
echo "bench rc $? $((SECONDS-S)) s" | tee -a $R/bench_wide.log; grep -v "^\[" $R/bench_wide.log | grep -E "^ *(batch|[0-9]+ )|^per-call|^GPU time" | cut -c1-160
S=$SECONDS
MLPGEN_TEST_GPU=1 timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/ -k "shipped or chain" > $R/tests.txt 2>&1
echo "tests rc $? $((SECONDS-S)) s" | tee -a $R/tests.txt; grep -E "^(FAILED|ERROR|SKIPPED)|passed|failed" $R/tests.txt | head -8 | cut -c1-300
