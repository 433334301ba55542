#!/bin/bash
# Session 18, second call: cluster tiles with 8 and 16 warps searched too (space.DOMAINS):
# the headline and 128,128,128 silu bf16 re-tuned at 1, 16 and 64 rows in place (exhaustive),
# the cluster GPU tests (8- and 16-warp one-row tiles added), the headline's winners measured
# again, and its bench without torch.compile at 1-1024 rows.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r139; mkdir -p $R/tuned
for H in mlp_256x512x256_gelu_fp16 mlp_128x128x128_silu_bf16; do
  case $H in
    mlp_256*) A="--widths 256,512,256 --act gelu"; T=210;;
    *) A="--widths 128,128,128 --act silu --dtype bf16"; T=150;;
  esac
  ( time timeout $T mlpgen $A --batches 1,16,64 --exhaustive --out tuned --json > $R/tune_$H.json 2> $R/tune_$H.err ) 2> $R/tune_$H.time
  echo "== tune $H $(grep real $R/tune_$H.time)"; tail -n 1 $R/tune_$H.err | cut -c1-160
  rm -f tuned/*.journal*; mlpgen show tuned/$H.py > $R/show_$H.txt 2>&1; sed -n 3,9p $R/show_$H.txt | cut -c1-140
  cp tuned/$H.py tuned/$H.trials.json $R/tuned/
done
H=mlp_256x512x256_gelu_fp16
timeout 40 python3 docs/h200/s13/recheck_probe.py tuned/$H.py 1 16 64 2>&1 | tee $R/recheck.txt
( time MLPGEN_TEST_GPU=1 timeout 110 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py -k "cluster_kernels or shipped" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
timeout 60 mlpgen bench tuned/$H.py --no-compile --batches 1,16,64,256,1024 --json > $R/bench.json 2> $R/bench.txt
echo "== bench $H"; grep -v "^\[" $R/bench.txt | grep -E "^ *(batch|[0-9]+ )|per-call|GPU time" | head -8 | cut -c1-130
tar czf $OUT/run139.tgz -C /tmp r139
