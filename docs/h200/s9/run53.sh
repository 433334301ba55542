#!/bin/bash
# Session 9, second call: the two public-matrix specs whose winners are rowblock re-tuned with
# rowblock's weights loaded first (run52: 0.85-0.96x GPU time on their tiles), with the
# commands of their last tunes, then benched; the GPU tests of rowblock with the final templates.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r53; mkdir -p $R/tuned
t() {  # name timeout mlpgen-args...
  local n=$1 to=$2; shift 2
  ( time timeout $to mlpgen "$@" --out $R/tuned --json > $R/tune_$n.json 2> $R/tune_$n.err ) 2> $R/tune_$n.time
  echo "== tune $n $(grep real $R/tune_$n.time)"; tail -n 1 $R/tune_$n.err | cut -c1-160
  rm -f $R/tuned/*.journal*; mlpgen show $R/tuned/$n.py > $R/show_$n.txt 2>&1; sed -n 4,16p $R/show_$n.txt | cut -c1-170
  cp $R/tuned/$n.py $R/tuned/$n.trials.json tuned/ 2>/dev/null
}
t mlp_64x64x64x64x64x3_relu_fp16 120 --widths 64,64,64,64,64,3 --act relu --batches 1,64,1024,16384,262144 --trials 8 --timeout 35
t mlp_128x128x128_silu_bf16 120 --widths 128,128,128 --act silu --dtype bf16 --batches 1,64,1024,16384,262144 --trials 8 --timeout 40
b() {  # name timeout
  ( time timeout $2 mlpgen bench tuned/$1.py --no-compile --json > $R/bench_$1.json 2> $R/bench_$1.txt ) 2> $R/bench_$1.time
  echo "== bench $1 $(grep real $R/bench_$1.time)"; grep -v "^\[" $R/bench_$1.txt | grep -E "^ *[0-9]+ |^per-call|^GPU" | head -n 22 | cut -c1-90
}
b mlp_64x64x64x64x64x3_relu_fp16 90
b mlp_128x128x128_silu_bf16 90
( time MLPGEN_TEST_GPU=1 timeout 150 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py -k "odd_depth4 or headline_spec_default" -p no:cacheprovider -rf > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
tar czf $OUT/run53.tgz -C /tmp r53
