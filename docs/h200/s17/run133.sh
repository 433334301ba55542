#!/bin/bash
# Session 17, sixth call: the row form's register estimate no longer counts a widened weight
# tile at one row, so one-row tiles of 64-column slices (and 32-column ones with 2 warps) are
# searched: the headline's 1 and 16 rows re-tuned in place (exhaustive) and measured again,
# the shipped-winner and cluster GPU tests, then the bench without torch.compile at 1-1024 rows.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r133; mkdir -p $R/tuned
H=mlp_256x512x256_gelu_fp16
( time timeout 200 mlpgen --widths 256,512,256 --act gelu --batches 1,16 --exhaustive --out tuned --json > $R/tune_$H.json 2> $R/tune_$H.err ) 2> $R/tune_$H.time
echo "== tune $H $(grep real $R/tune_$H.time)"; tail -n 1 $R/tune_$H.err | cut -c1-160
rm -f tuned/*.journal*; mlpgen show tuned/$H.py > $R/show_$H.txt 2>&1; sed -n 3,9p $R/show_$H.txt | cut -c1-140
cp tuned/$H.py tuned/$H.trials.json $R/tuned/
timeout 40 python3 docs/h200/s13/recheck_probe.py tuned/$H.py 1 16 64 2>&1 | tee $R/recheck.txt
( time MLPGEN_TEST_GPU=1 timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py tests/test_gpu_module.py -k "shipped or graph or capture" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
timeout 70 mlpgen bench tuned/$H.py --no-compile --batches 1,16,64,256,1024 --json > $R/bench.json 2> $R/bench.txt
echo "== bench $H"; grep -v "^\[" $R/bench.txt | grep -E "^ *(batch|[0-9]+ )|per-call|GPU time" | head -8 | cut -c1-130
tar czf $OUT/run133.tgz -C /tmp r133
