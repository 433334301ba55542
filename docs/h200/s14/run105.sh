#!/bin/bash
# Session 14, fifth call: the cluster strategy through the native lane (clusters launched by cuLaunchKernelEx):
# its GPU tests and the lanes', then the headline's buckets 1-256 re-tuned in place (exhaustive) and
# 128,128,128 silu bf16's small buckets (16 trials), the recorded GPU times measured again as
# the tuner measures them, and the headline benched at 1-1024 rows.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r105; mkdir -p $R/tuned
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py tests/test_gpu_module.py tests/test_gpu_tune.py tests/test_native.py -k "cluster or take_the_lane or take_the_native_lane or own_kernel or native" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -20 | cut -c1-300; grep real $R/gpu_tests.time
t() {  # name timeout mlpgen-args...
  local n=$1 to=$2; shift 2
  ( time timeout $to mlpgen "$@" --out tuned --json > $R/tune_$n.json 2> $R/tune_$n.err ) 2> $R/tune_$n.time
  echo "== tune $n $(grep real $R/tune_$n.time)"; tail -n 1 $R/tune_$n.err | cut -c1-160
  rm -f tuned/*.journal*; mlpgen show tuned/$n.py > $R/show_$n.txt 2>&1; sed -n 3,20p $R/show_$n.txt | cut -c1-140
  cp tuned/$n.py tuned/$n.trials.json $R/tuned/
}
H=mlp_256x512x256_gelu_fp16; T=mlp_128x128x128_silu_bf16
t $H 200 --widths 256,512,256 --act gelu --batches 1,16,64,256 --exhaustive
t $T 80 --widths 128,128,128 --act silu --dtype bf16 --batches 1,64 --trials 16 --timeout 60
timeout 60 python3 docs/h200/s13/recheck_probe.py tuned/$H.py 1 16 64 256 2>&1 | tee $R/recheck.txt
( time timeout 120 mlpgen bench tuned/$H.py --no-compile --json --batches 1,16,64,256,1024 > $R/bench_$H.json 2> $R/bench_$H.txt ) 2> $R/bench.time
grep -v "^\[" $R/bench_$H.txt | grep -E "^ *[0-9]+ |^per-call|^GPU|^note" | head -n 30 | cut -c1-120; grep real $R/bench.time
tar czf $OUT/run105.tgz -C /tmp r105
