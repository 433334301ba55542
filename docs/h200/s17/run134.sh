#!/bin/bash
# Session 17, seventh call: the row form's register estimate (run133) opens one-row tiles of
# 64-column slices with 2 warps to 128,128,128 silu bf16: its 1, 16 and 64 rows re-tuned in
# place (exhaustive) and measured again, the shipped-winner GPU tests, then its bench without
# torch.compile at 1, 16 and 64 rows.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r134; mkdir -p $R/tuned
S=mlp_128x128x128_silu_bf16
( time timeout 200 mlpgen --widths 128,128,128 --act silu --dtype bf16 --batches 1,16,64 --exhaustive --out tuned --json > $R/tune_$S.json 2> $R/tune_$S.err ) 2> $R/tune_$S.time
echo "== tune $S $(grep real $R/tune_$S.time)"; tail -n 1 $R/tune_$S.err | cut -c1-160
rm -f tuned/*.journal*; mlpgen show tuned/$S.py > $R/show_$S.txt 2>&1; sed -n 3,8p $R/show_$S.txt | cut -c1-140
cp tuned/$S.py tuned/$S.trials.json $R/tuned/
timeout 40 python3 docs/h200/s13/recheck_probe.py tuned/$S.py 1 16 64 2>&1 | tee $R/recheck.txt
( time MLPGEN_TEST_GPU=1 timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py -k "shipped" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
timeout 60 mlpgen bench tuned/$S.py --no-compile --batches 1,16,64 --json > $R/bench_$S.json 2> $R/bench_$S.txt
echo "== bench $S"; grep -v "^\[" $R/bench_$S.txt | grep -E "^ *(batch|[0-9]+ )|per-call|GPU time" | head -10 | cut -c1-130
tar czf $OUT/run134.tgz -C /tmp r134
