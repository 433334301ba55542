#!/bin/bash
# Session 13: the headline's buckets from 1 to 4096 rows re-tuned in place, exhaustively, now
# that calls take the native lane (the shipped table's host times were the Python lane's; the
# 16384-row and larger buckets keep run51's and earlier searches: GPU-bound, one launch either
# way), then benched; the two small public-matrix specs re-tuned in place (their previous
# winners enqueued first, 16 trials a bucket, as run54) and benched.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r95; mkdir -p $R/tuned
t() {  # name timeout mlpgen-args...
  local n=$1 to=$2; shift 2
  ( time timeout $to mlpgen "$@" --out tuned --json > $R/tune_$n.json 2> $R/tune_$n.err ) 2> $R/tune_$n.time
  echo "== tune $n $(grep real $R/tune_$n.time)"; tail -n 1 $R/tune_$n.err | cut -c1-160
  rm -f tuned/*.journal*; mlpgen show tuned/$n.py > $R/show_$n.txt 2>&1; sed -n 3,20p $R/show_$n.txt | cut -c1-120
  cp tuned/$n.py tuned/$n.trials.json $R/tuned/
}
b() {  # name timeout [--plot FILE]
  local n=$1 to=$2; shift 2
  ( time timeout $to mlpgen bench tuned/$n.py --no-compile --json "$@" > $R/bench_$n.json 2> $R/bench_$n.txt ) 2> $R/bench_$n.time
  echo "== bench $n $(grep real $R/bench_$n.time)"; grep -v "^\[" $R/bench_$n.txt | grep -E "^ *[0-9]+ |^per-call|^GPU|^note" | head -n 30 | cut -c1-110
}
t mlp_256x512x256_gelu_fp16 300 --widths 256,512,256 --act gelu --batches 1,16,64,256,1024,4096 --exhaustive
b mlp_256x512x256_gelu_fp16 90 --plot $R/bench_headline.png
t mlp_64x64x64x64x64x3_relu_fp16 80 --widths 64,64,64,64,64,3 --act relu --batches 1,64,1024,16384,262144 --trials 16 --timeout 60
t mlp_128x128x128_silu_bf16 80 --widths 128,128,128 --act silu --dtype bf16 --batches 1,64,1024,16384,262144 --trials 16 --timeout 60
b mlp_64x64x64x64x64x3_relu_fp16 60
b mlp_128x128x128_silu_bf16 60
tar czf $OUT/run95.tgz -C /tmp r95
