#!/bin/bash
# Session 9, third call: run53 tuned into a fresh folder, so the earlier winners were not among
# the first candidates (128,128,128's rowblock at batch 1 went unmeasured and stream won). Here
# both rowblock public-matrix specs are re-tuned in place (tuned/: the previous winners are
# enqueued first) with 16 trials per bucket, then benched.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r54; mkdir -p $R/tuned
t() {  # name timeout mlpgen-args...
  local n=$1 to=$2; shift 2
  ( time timeout $to mlpgen "$@" --out tuned --json > $R/tune_$n.json 2> $R/tune_$n.err ) 2> $R/tune_$n.time
  echo "== tune $n $(grep real $R/tune_$n.time)"; tail -n 1 $R/tune_$n.err | cut -c1-160
  rm -f tuned/*.journal*; mlpgen show tuned/$n.py > $R/show_$n.txt 2>&1; sed -n 4,11p $R/show_$n.txt | cut -c1-170
  cp tuned/$n.py tuned/$n.trials.json $R/tuned/
}
t mlp_64x64x64x64x64x3_relu_fp16 200 --widths 64,64,64,64,64,3 --act relu --batches 1,64,1024,16384,262144 --trials 16 --timeout 35
t mlp_128x128x128_silu_bf16 200 --widths 128,128,128 --act silu --dtype bf16 --batches 1,64,1024,16384,262144 --trials 16 --timeout 40
b() {  # name timeout
  ( time timeout $2 mlpgen bench tuned/$1.py --no-compile --json > $R/bench_$1.json 2> $R/bench_$1.txt ) 2> $R/bench_$1.time
  echo "== bench $1 $(grep real $R/bench_$1.time)"; grep -v "^\[" $R/bench_$1.txt | grep -E "^ *[0-9]+ |^per-call|^GPU" | head -n 22 | cut -c1-90
}
b mlp_64x64x64x64x64x3_relu_fp16 90
b mlp_128x128x128_silu_bf16 90
tar czf $OUT/run54.tgz -C /tmp r54
