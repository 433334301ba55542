#!/bin/bash
# Session 25, first call: persist_sync_probe.py (per-row-block counters in place of persist's
# grid barrier, TMA loads; the headline at 1024 and 256 rows); the tuner's GPU tests (the polish
# steps' first run on the GPU); the headline's 256 and 1024 rows re-tuned with the polish steps.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run179; mkdir -p $R/tuned
timeout 200 python3 docs/h200/s25/persist_sync_probe.py $R/sync 1024 256 > $R/sync.log 2>&1; echo "probe rc $?"
grep -v Warning $R/sync.log | tail -16 | cut -c1-250; rm -f $R/sync/*.py
( time MLPGEN_TEST_GPU=1 timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_tune.py > $R/gpu_tune_tests.txt 2>&1 ) 2> $R/gpu_tune_tests.time
grep -E "^(FAILED|ERROR|E )|passed|failed" $R/gpu_tune_tests.txt | head -8 | cut -c1-300; grep real $R/gpu_tune_tests.time
H=tuned/mlp_256x512x256_gelu_fp16
( time timeout 190 mlpgen --widths 256,512,256 --act gelu --batches 256,1024 --trials 48 --timeout 170 --out tuned > $R/tune_headline.txt 2>&1 ) 2> $R/tune_headline.time
tail -1 $R/tune_headline.txt | cut -c1-200; grep real $R/tune_headline.time
cp $H.py $H.trials.json $R/tuned/
mlpgen show $H.py > $R/show_headline.txt; grep -E "^ *(1|64|256|1024) |graph" $R/show_headline.txt | head -10
cd $OUT && tar czf run179.tgz run179 && rm -rf run179
