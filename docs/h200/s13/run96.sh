#!/bin/bash
# Session 13: run95's re-tune of 64,64,64,64,64,3 recorded GPU times above the earlier table's
# for the same kernels (53.08 against 31.82 us at 262144 rows); both modules' cells measured
# again as the tuner measures them (recheck_probe.py), then that spec tuned again in place
# (16 trials a bucket) and measured the same way; then the GPU tests of the shipped winners
# (run95's headline and silu tables now in tuned/) and of the module.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r96; mkdir -p $R/tuned; N=mlp_64x64x64x64x64x3_relu_fp16
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/gpu.txt
cp docs/h200/s13/run95/tuned/$N.py $R/run95_$N.py
for p in tuned/$N.py $R/run95_$N.py; do timeout 60 python3 docs/h200/s13/recheck_probe.py $p 1 16384 262144; done 2>&1 | tee $R/recheck.txt
( time timeout 80 mlpgen --widths 64,64,64,64,64,3 --act relu --batches 1,64,1024,16384,262144 --trials 16 --timeout 60 --out tuned --json > $R/tune_$N.json 2> $R/tune_$N.err ) 2> $R/tune_$N.time
tail -n 1 $R/tune_$N.err | cut -c1-160; rm -f tuned/*.journal*
mlpgen show tuned/$N.py > $R/show_$N.txt 2>&1; sed -n 3,9p $R/show_$N.txt | cut -c1-120; cp tuned/$N.py tuned/$N.trials.json $R/tuned/
timeout 40 python3 docs/h200/s13/recheck_probe.py tuned/$N.py 1 16384 262144 2>&1 | tee -a $R/recheck.txt
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >> $R/gpu.txt
( time MLPGEN_TEST_GPU=1 timeout 300 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_module.py tests/test_native.py tests/test_gpu_kernels.py -k "shipped or module or native or lane" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
tar czf $OUT/run96.tgz -C /tmp r96
