#!/bin/bash
# Session 15, sixth call: the row-by-row cluster form (templates/cluster_rows.j2: 1-8 rows a
# cluster, x and both weight tiles loaded first): every spec, dtype and tile (crash_probe.py),
# the cluster GPU tests, the probe against the 16-row tile (FMA_PROBE=rows), then the
# headline's buckets 1-256 re-tuned in place (exhaustive) and the table measured again.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r116; mkdir -p $R/tuned
( time timeout 170 python3 docs/h200/s15/crash_probe.py > $R/crash.txt 2> $R/crash.err ) 2> $R/crash.time
grep -c ": ok" $R/crash.txt; grep -v ": ok\|infeasible" $R/crash.txt; grep real $R/crash.time
( time MLPGEN_TEST_GPU=1 timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py -k "cluster_kernels" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
( time FMA_PROBE=rows timeout 120 python3 docs/h200/s15/fma_probe.py $R > $R/probe.txt 2> $R/probe.err ) 2> $R/probe.time
grep -v checked $R/probe.txt; tail -n 3 $R/probe.err | cut -c1-300; grep real $R/probe.time
H=mlp_256x512x256_gelu_fp16
( time timeout 180 mlpgen --widths 256,512,256 --act gelu --batches 1,16,64,256 --exhaustive --out tuned --json > $R/tune_$H.json 2> $R/tune_$H.err ) 2> $R/tune_$H.time
echo "== tune $H $(grep real $R/tune_$H.time)"; tail -n 1 $R/tune_$H.err | cut -c1-160
rm -f tuned/*.journal*; mlpgen show tuned/$H.py > $R/show_$H.txt 2>&1; sed -n 3,9p $R/show_$H.txt | cut -c1-140
cp tuned/$H.py tuned/$H.trials.json $R/tuned/
timeout 40 python3 docs/h200/s13/recheck_probe.py tuned/$H.py 1 16 64 256 2>&1 | tee $R/recheck.txt
rm -f $R/probe_*.py; tar czf $OUT/run116.tgz -C /tmp r116
