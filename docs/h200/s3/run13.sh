#!/bin/bash
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r13; mkdir -p $R/tuned $R/fp32
( time MLPGEN_TEST_GPU=1 timeout 170 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py tests/test_gpu_module.py -k "layered or split or graph" -p no:cacheprovider > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
tail -6 $R/gpu_tests.txt; grep real $R/gpu_tests.time
( time timeout 200 mlpgen --widths 256,512,256 --act gelu --out $R/tuned --json > $R/tune_headline.json 2> $R/tune_headline.err ) 2> $R/tune_headline.time
tail -2 $R/tune_headline.err | cut -c1-300; grep real $R/tune_headline.time
rm -f $R/tuned/*.db; mlpgen show $R/tuned/mlp_256x512x256_gelu_fp16.py > $R/show_headline.txt 2>&1; head -16 $R/show_headline.txt
( time timeout 170 mlpgen --widths 784,1024,1024,10 --act relu --dtype fp32 --out $R/fp32 --batches 1,64,1024,16384,262144 --trials 8 --timeout 150 > $R/tune_fp32.json 2> $R/tune_fp32.err ) 2> $R/tune_fp32.time
tail -3 $R/tune_fp32.err | cut -c1-300; grep real $R/tune_fp32.time
rm -f $R/fp32/*.db; mlpgen show $R/fp32/mlp_784x1024x1024x10_relu_fp32.py > $R/show_fp32.txt 2>&1; head -12 $R/show_fp32.txt
tar czf $OUT/run13.tgz -C /tmp r13
