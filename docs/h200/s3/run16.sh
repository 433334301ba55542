#!/bin/bash
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r16; mkdir -p $R/tuned
( time timeout 170 mlpgen --widths 256,512,256 --act gelu --out $R/tuned --json > $R/tune_headline.json 2> $R/tune_headline.err ) 2> $R/tune_headline.time
tail -1 $R/tune_headline.err | cut -c1-200; grep real $R/tune_headline.time
rm -f $R/tuned/*.db; mlpgen show $R/tuned/mlp_256x512x256_gelu_fp16.py > $R/show_headline.txt 2>&1; sed -n 4,20p $R/show_headline.txt
( time MLPGEN_TEST_GPU=1 timeout 80 python3 -m pytest -q -m gpu tests/test_gpu_tune.py -p no:cacheprovider > $R/gpu_tests_tune.txt 2>&1 ) 2> $R/gpu_tests_tune.time
tail -3 $R/gpu_tests_tune.txt; grep real $R/gpu_tests_tune.time
tar czf $OUT/run16.tgz -C /tmp r16
