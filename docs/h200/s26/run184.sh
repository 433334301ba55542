#!/bin/bash
# Session 26, first call: session 25's persist stages probe (persist with 3-8 stages and k steps
# of 32/64/128 at the headline's 1024 and 256 rows); the headline's 256 rows re-tuned with the
# PDL-pass fix (a previous winner that ran with PDL is tried with it); the tuner's GPU tests.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run184; mkdir -p $R/tuned
( time timeout 220 python3 docs/h200/s25/persist_stages_probe.py $R/stages 1024 256 > $R/stages.log 2>&1 ) 2> $R/stages.time; echo "probe rc $?"
grep -v Warning $R/stages.log | tail -34 | cut -c1-250; grep real $R/stages.time; rm -f $R/stages/*.py
H=tuned/mlp_256x512x256_gelu_fp16
( time timeout 120 mlpgen --widths 256,512,256 --act gelu --batches 256 --trials 48 --timeout 110 --out tuned > $R/tune_headline.txt 2>&1 ) 2> $R/tune_headline.time
tail -1 $R/tune_headline.txt | cut -c1-200; grep real $R/tune_headline.time
cp $H.py $H.trials.json $R/tuned/
mlpgen show $H.py > $R/show_headline.txt; grep -E "^ *(1|64|256|1024) |graph" $R/show_headline.txt | head -10
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_tune.py > $R/gpu_tune_tests.txt 2>&1 ) 2> $R/gpu_tune_tests.time
grep -E "^(FAILED|ERROR|E )|passed|failed" $R/gpu_tune_tests.txt | head -8 | cut -c1-300; grep real $R/gpu_tune_tests.time
cd $OUT && tar czf run184.tgz run184 && rm -rf run184
