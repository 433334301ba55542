#!/bin/bash
# Session 25, fourth call: 1024,4096,1024 gelu_tanh bf16 re-tuned at 64 and 1024 rows with the
# wider persist space (last_block_n, 4 stages) and the polish steps; the result benched there
# without torch.compile.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run182; mkdir -p $R/tuned
W=tuned/mlp_1024x4096x1024_gelu_tanh_bf16
( time timeout 260 mlpgen --widths 1024,4096,1024 --act gelu_tanh --dtype bf16 --batches 64,1024 --trials 40 --timeout 230 --out tuned > $R/tune_wide.txt 2>&1 ) 2> $R/tune_wide.time
tail -1 $R/tune_wide.txt | cut -c1-200; grep real $R/tune_wide.time
cp $W.py $W.trials.json $R/tuned/
mlpgen show $W.py > $R/show_wide.txt; grep -E "^ *(1|64|1024) |graph" $R/show_wide.txt | head -6
timeout 90 mlpgen bench $W.py --no-compile --batches 64,1024 --json > $R/bench_wide.json 2> $R/bench_wide.txt; grep -v "^\[" $R/bench_wide.txt | tail -9 | cut -c1-160
cd $OUT && tar czf run182.tgz run182 && rm -rf run182
