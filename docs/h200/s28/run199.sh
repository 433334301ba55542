#!/bin/bash
# Session 28: session 27's run198 (784,1024,1024,10 fp32 re-tuned at 64 and 1024 rows, whose
# persist cells were tuned before persist's late PDL release, and benched), then the order of
# rowblock's PDL steps on the public-matrix cells that run rowblock with PDL, then the shipped
# modules' GPU tests on the tables as they are after the re-tune.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run199; mkdir -p $R
F=tuned/mlp_784x1024x1024x10_relu_fp32
S=$SECONDS
timeout 160 mlpgen --widths 784,1024,1024,10 --act relu --dtype fp32 --batches 64,1024 --trials 32 --timeout 125 --out tuned > $R/tune_fp32.txt 2>&1
echo "tune rc $? $((SECONDS-S)) s" | tee -a $R/tune_fp32.txt; tail -1 $R/tune_fp32.txt | cut -c1-200
cp $F.py $F.trials.json $R/
mlpgen show $F.py > $R/show_fp32.txt; grep -E "^ *(64|1024) |graph" $R/show_fp32.txt | head -6
S=$SECONDS
timeout 80 mlpgen bench $F.py --no-compile --batches 64,1024 --json > $R/bench_fp32.json 2> $R/bench_fp32.txt
echo "bench rc $? $((SECONDS-S)) s" | tee -a $R/bench_fp32.txt; grep -v "^\[" $R/bench_fp32.txt | grep -E "^ *(batch|[0-9]+ )|^per-call|^GPU time" | cut -c1-160
S=$SECONDS
P=docs/h200/s28/rowblock_pdl_order_probe.py
export PDL_PROBE_ROUNDS=3
( timeout 150 python3 $P $R/order tuned/mlp_64x64x64x64x64x3_relu_fp16.py 1 64 1024 && timeout 110 python3 $P $R/order tuned/mlp_128x128x128_silu_bf16.py 64 1024 ) > $R/order.txt 2>&1
echo "order rc $? $((SECONDS-S)) s" | tee -a $R/order.txt; grep -E "^\||only|Error|error" $R/order.txt | grep -v "^|---" | cut -c1-160
(cd $R && tar czf order.tgz order && rm -rf order)
S=$SECONDS
MLPGEN_TEST_GPU=1 timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/ -k shipped > $R/tests.txt 2>&1
echo "tests rc $? $((SECONDS-S)) s" | tee -a $R/tests.txt; grep -E "^(FAILED|ERROR|SKIPPED)|passed|failed" $R/tests.txt | head -8 | cut -c1-300
