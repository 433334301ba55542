#!/bin/bash
# Session 10, fourth call: the two wide public-matrix specs, last tuned in the third and fourth
# sessions, re-tuned in place (tuned/: their previous winners enqueued first) with the current
# space (chain from 16 rows, its small tiles; the per-launch-path host floor) and 16 trials per
# bucket, then benched.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r65; mkdir -p $R/tuned
t() {  # name timeout mlpgen-args...
  local n=$1 to=$2; shift 2
  ( time timeout $to mlpgen "$@" --out tuned --json > $R/tune_$n.json 2> $R/tune_$n.err ) 2> $R/tune_$n.time
  echo "== tune $n $(grep real $R/tune_$n.time)"; tail -n 1 $R/tune_$n.err | cut -c1-160
  rm -f tuned/*.journal*; mlpgen show tuned/$n.py > $R/show_$n.txt 2>&1; sed -n 4,11p $R/show_$n.txt | cut -c1-170
  cp tuned/$n.py tuned/$n.trials.json $R/tuned/
}
t mlp_784x1024x1024x10_relu_fp32 190 --widths 784,1024,1024,10 --act relu --dtype fp32 --batches 1,64,1024,16384,262144 --trials 16 --timeout 100
t mlp_1024x4096x1024_gelu_tanh_bf16 160 --widths 1024,4096,1024 --act gelu_tanh --dtype bf16 --batches 1,64,1024,16384,262144 --trials 16 --timeout 90
b() {  # name timeout
  ( time timeout $2 mlpgen bench tuned/$1.py --no-compile --json > $R/bench_$1.json 2> $R/bench_$1.txt ) 2> $R/bench_$1.time
  echo "== bench $1 $(grep real $R/bench_$1.time)"; grep -v "^\[" $R/bench_$1.txt | grep -E "^ *[0-9]+ |^per-call|^GPU" | head -n 22 | cut -c1-90
}
b mlp_784x1024x1024x10_relu_fp32 80
b mlp_1024x4096x1024_gelu_tanh_bf16 80
tar czf $OUT/run65.tgz -C /tmp r65
