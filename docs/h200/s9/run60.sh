#!/bin/bash
# Session 9, ninth call: the headline's 16- and 64-row buckets re-tuned in place, exhaustively,
# with chain's wider domain and buckets (run59: 16 x 16 chain tiles took 0.81x split's GPU time
# at 64 rows), then the module benched and the chain GPU tests run.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r60; mkdir -p $R/tuned; N=mlp_256x512x256_gelu_fp16
( time timeout 200 mlpgen --widths 256,512,256 --act gelu --batches 16,64 --exhaustive --json > $R/tune_16_64.json 2> $R/tune_16_64.err ) 2> $R/tune_16_64.time
tail -n 1 $R/tune_16_64.err | cut -c1-200; grep real $R/tune_16_64.time
rm -f tuned/*.journal*; mlpgen show tuned/$N.py > $R/show_headline.txt 2>&1; sed -n 3,14p $R/show_headline.txt | cut -c1-170
cp tuned/$N.py tuned/$N.trials.json $R/tuned/
( time timeout 90 mlpgen bench tuned/$N.py --no-compile --json --plot $R/bench_headline.png > $R/bench_headline.json 2> $R/bench_headline.txt ) 2> $R/bench_headline.time
grep -v "^\[" $R/bench_headline.txt | grep -E "^ *[0-9]+ |^per-call|^GPU|^note" | head -n 30 | cut -c1-100
( time MLPGEN_TEST_GPU=1 timeout 100 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py tests/test_gpu_module.py -k "chain" -p no:cacheprovider -rf > $R/gpu_tests_chain.txt 2>&1 ) 2> $R/gpu_tests_chain.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_chain.txt | head -10; grep real $R/gpu_tests_chain.time
tar czf $OUT/run60.tgz -C /tmp r60
