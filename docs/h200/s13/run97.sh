#!/bin/bash
# Session 13: with the tuner's fix (hot_path drops the native lanes of the configs timed before:
# run95/run96 timed each warps/stages variant of a kernel as the first one timed), its GPU test
# and the native lane's; then the re-tunes of run95 again: the headline's buckets 1-4096 in
# place, exhaustively, and the two small public-matrix specs (16 trials a bucket), each shown,
# benched, and its recorded GPU times measured again the way the tuner measures them.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r97; mkdir -p $R/tuned
( time MLPGEN_TEST_GPU=1 timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_tune.py tests/test_native.py tests/test_gpu_module.py -k "own_kernel or native" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
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
H=mlp_256x512x256_gelu_fp16; S=mlp_64x64x64x64x64x3_relu_fp16; T=mlp_128x128x128_silu_bf16
t $H 240 --widths 256,512,256 --act gelu --batches 1,16,64,256,1024,4096 --exhaustive
t $S 80 --widths 64,64,64,64,64,3 --act relu --batches 1,64,1024,16384,262144 --trials 16 --timeout 60
t $T 80 --widths 128,128,128 --act silu --dtype bf16 --batches 1,64,1024,16384,262144 --trials 16 --timeout 60
timeout 60 python3 docs/h200/s13/recheck_probe.py tuned/$H.py 1 64 256 1024 4096 2>&1 | tee $R/recheck.txt
timeout 40 python3 docs/h200/s13/recheck_probe.py tuned/$S.py 1 16384 262144 2>&1 | tee -a $R/recheck.txt
b $H 90 --plot $R/bench_headline.png
b $S 60
b $T 60
tar czf $OUT/run97.tgz -C /tmp r97
