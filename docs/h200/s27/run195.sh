#!/bin/bash
# Session 27, after run193 (its tuner kept a layered "PDL" cell at 1024 rows, though layered's
# kernels launch plainly): 1024,4096,1024's 64 and 1024 rows re-tuned with pdl_pass skipping
# layered, and benched without torch.compile. Outputs straight under $OUT/run195 (7 files).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run195; mkdir -p $R
W=tuned/mlp_1024x4096x1024_gelu_tanh_bf16
S=$SECONDS
timeout 200 mlpgen --widths 1024,4096,1024 --act gelu_tanh --dtype bf16 --batches 64,1024 --trials 32 --timeout 170 --out tuned > $R/tune_wide.txt 2>&1
echo "tune rc $? $((SECONDS-S)) s" | tee -a $R/tune_wide.txt; tail -1 $R/tune_wide.txt | cut -c1-200
cp $W.py $W.trials.json $R/
mlpgen show $W.py > $R/show_wide.txt; grep -E "^ *(64|1024) |graph" $R/show_wide.txt | head -6
S=$SECONDS
timeout 80 mlpgen bench $W.py --no-compile --batches 64,1024 --json > $R/bench_wide.json 2> $R/bench_wide.txt
echo "bench rc $? $((SECONDS-S)) s" | tee -a $R/bench_wide.txt; grep -v "^\[" $R/bench_wide.txt | grep -E "^ *(batch|[0-9]+ )|^per-call|^GPU time" | cut -c1-160
