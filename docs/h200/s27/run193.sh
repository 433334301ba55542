#!/bin/bash
# Session 27, after run192 (chain 1.60x slower releasing the next kernel before its wait): chain
# kernels now wait, then release. The chain and linked-calls GPU tests on it; the headline's
# 256, 1024 and 4096 rows re-tuned (chain competes at 16-4096 rows, and runs the 256-row graph
# cell); 1024,4096,1024's 64 and 1024 rows re-tuned (64 rows ran chain) and benched without
# torch.compile. Each stage tars its outputs, so a call stopped early keeps what finished.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run193; mkdir -p $R
H=tuned/mlp_256x512x256_gelu_fp16
W=tuned/mlp_1024x4096x1024_gelu_tanh_bf16
stage() { (cd $OUT && tar czf run193_$1.tgz run193 && rm -rf run193 && mkdir run193); }
S=$SECONDS
MLPGEN_TEST_GPU=1 timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/ -k "chain or linked_by_pdl or several_kernels" > $R/tests.txt 2>&1
echo "tests rc $? $((SECONDS-S)) s" | tee -a $R/tests.txt; grep -E "^(FAILED|ERROR)|passed|failed" $R/tests.txt | head -6 | cut -c1-300
stage tests; S=$SECONDS
timeout 130 mlpgen --widths 256,512,256 --act gelu --batches 256,1024,4096 --trials 32 --timeout 110 --out tuned > $R/tune.txt 2>&1
echo "tune rc $? $((SECONDS-S)) s" | tee -a $R/tune.txt; tail -1 $R/tune.txt | cut -c1-200
cp $H.py $H.trials.json $R/
mlpgen show $H.py > $R/show.txt 2>&1; grep -E "^ *(256|1024|4096) |graph" $R/show.txt | head -8
stage headline; S=$SECONDS
timeout 200 mlpgen --widths 1024,4096,1024 --act gelu_tanh --dtype bf16 --batches 64,1024 --trials 32 --timeout 170 --out tuned > $R/tune_wide.txt 2>&1
echo "tune rc $? $((SECONDS-S)) s" | tee -a $R/tune_wide.txt; tail -1 $R/tune_wide.txt | cut -c1-200
cp $W.py $W.trials.json $R/
mlpgen show $W.py > $R/show_wide.txt; grep -E "^ *(64|1024) |graph" $R/show_wide.txt | head -6
S=$SECONDS
timeout 80 mlpgen bench $W.py --no-compile --batches 64,1024 --json > $R/bench_wide.json 2> $R/bench_wide.txt
echo "bench rc $? $((SECONDS-S)) s" | tee -a $R/bench_wide.txt; grep -v "^\[" $R/bench_wide.txt | grep -E "^ *(batch|[0-9]+ )|^per-call|^GPU time" | cut -c1-160
stage wide
