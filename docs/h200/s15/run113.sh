#!/bin/bash
# Session 15, third call: one-row cluster tiles hand over one value a remote store (run111's
# pairs were padded with undefined operands where a thread held one value): every spec, dtype
# and tile again (crash_probe.py), the GPU tests of the cluster, shipped, lane and graph paths,
# then the headline's buckets 1-256 re-tuned in place (exhaustive) with the final templates.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r113; mkdir -p $R/tuned
( time timeout 150 python3 docs/h200/s15/crash_probe.py > $R/crash.txt 2> $R/crash.err ) 2> $R/crash.time
grep -c ": ok" $R/crash.txt; grep -v ": ok\|infeasible" $R/crash.txt; grep real $R/crash.time
( time MLPGEN_TEST_GPU=1 timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py tests/test_gpu_module.py tests/test_native.py tests/test_gpu_tune.py -k "shipped or cluster or lane or native or own_kernel or graph or capture" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -20 | cut -c1-300; grep real $R/gpu_tests.time
H=mlp_256x512x256_gelu_fp16
( time timeout 170 mlpgen --widths 256,512,256 --act gelu --batches 1,16,64,256 --exhaustive --out tuned --json > $R/tune_$H.json 2> $R/tune_$H.err ) 2> $R/tune_$H.time
echo "== tune $H $(grep real $R/tune_$H.time)"; tail -n 1 $R/tune_$H.err | cut -c1-160
rm -f tuned/*.journal*; mlpgen show tuned/$H.py > $R/show_$H.txt 2>&1; sed -n 3,10p $R/show_$H.txt | cut -c1-140
cp tuned/$H.py tuned/$H.trials.json $R/tuned/
tar czf $OUT/run113.tgz -C /tmp r113
