#!/bin/bash
# Session 15, first call: the cluster strategy's one-row tiles (block_m 1 on the CUDA cores):
# their GPU tests, the probe against the shipped 16-row tile (docs/h200/s15/fma_probe.py), then
# the headline's buckets 1-256 re-tuned in place (exhaustive), the recorded GPU times measured
# again as the tuner measures them, and the headline benched at 1-1024 rows.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r111; mkdir -p $R/tuned
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt
( time MLPGEN_TEST_GPU=1 timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py -k "cluster" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -20 | cut -c1-300; grep real $R/gpu_tests.time
( time timeout 200 python3 docs/h200/s15/fma_probe.py $R > $R/probe.txt 2> $R/probe.err ) 2> $R/probe.time
cat $R/probe.txt; tail -n 8 $R/probe.err | cut -c1-300; grep real $R/probe.time
H=mlp_256x512x256_gelu_fp16
( time timeout 170 mlpgen --widths 256,512,256 --act gelu --batches 1,16,64,256 --exhaustive --out tuned --json > $R/tune_$H.json 2> $R/tune_$H.err ) 2> $R/tune_$H.time
echo "== tune $H $(grep real $R/tune_$H.time)"; tail -n 1 $R/tune_$H.err | cut -c1-160
rm -f tuned/*.journal*; mlpgen show tuned/$H.py > $R/show_$H.txt 2>&1; sed -n 3,20p $R/show_$H.txt | cut -c1-140
cp tuned/$H.py tuned/$H.trials.json $R/tuned/
timeout 60 python3 docs/h200/s13/recheck_probe.py tuned/$H.py 1 16 64 256 2>&1 | tee $R/recheck.txt
( time timeout 100 mlpgen bench tuned/$H.py --no-compile --json --batches 1,16,64,256,1024 > $R/bench_$H.json 2> $R/bench_$H.txt ) 2> $R/bench.time
grep -v "^\[" $R/bench_$H.txt | grep -E "^ *[0-9]+ |^per-call|^GPU|^note" | head -n 30 | cut -c1-120; grep real $R/bench.time
rm -f $R/probe_*.py; tar czf $OUT/run111.tgz -C /tmp r111
