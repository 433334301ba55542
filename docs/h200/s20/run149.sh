#!/bin/bash
# Session 20, second call: the two wide public-matrix modules re-tuned at 1/64/1024 rows with
# the current space and the tuner's PDL pass (last tuned in the tenth session), benched; then
# every contender (torch.compile both modes) against the shipped headline at 1/64/1024 rows.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r149; mkdir -p $R/tuned
W=tuned/mlp_784x1024x1024x10_relu_fp32; B=tuned/mlp_1024x4096x1024_gelu_tanh_bf16
( time timeout 170 mlpgen --widths 784,1024,1024,10 --act relu --dtype fp32 --batches 1,64,1024 --trials 16 --timeout 100 --out tuned > $R/tune_fp32.txt 2>&1 ) 2> $R/tune_fp32.time
tail -2 $R/tune_fp32.txt | cut -c1-200; grep real $R/tune_fp32.time
( time timeout 170 mlpgen --widths 1024,4096,1024 --act gelu_tanh --dtype bf16 --batches 1,64,1024 --trials 16 --timeout 90 --out tuned > $R/tune_bf16.txt 2>&1 ) 2> $R/tune_bf16.time
tail -2 $R/tune_bf16.txt | cut -c1-200; grep real $R/tune_bf16.time
cp $W.* $B.* $R/tuned/
mlpgen show $W.py | head -12; mlpgen show $B.py | head -12
for m in $W $B; do n=$(basename $m); timeout 70 mlpgen bench $m.py --no-compile --batches 1,64,1024 --json > $R/bench_$n.json 2> $R/bench_$n.txt; tail -6 $R/bench_$n.txt; done
timeout 200 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --batches 1,64,1024 --json --plot $R/bench_compile.png > $R/bench_compile.json 2> $R/bench_compile.txt; tail -12 $R/bench_compile.txt
tar czf $OUT/run149.tgz -C /tmp r149
