#!/bin/bash
# Session 24, second call: persist's last_block_n and 4 stages in the space (templates changed,
# every shipped module re-rendered). The persist GPU tests; the headline's 256 and 1024 rows and
# 784,1024,1024,10 fp32's 1 / 64 / 1024 rows re-tuned; the headline benched at 1 / 64 / 1024
# rows without torch.compile.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run172; mkdir -p $R/tuned
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py tests/test_gpu_module.py -k "persist or graph_winner" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
H=tuned/mlp_256x512x256_gelu_fp16; W=tuned/mlp_784x1024x1024x10_relu_fp32
( time timeout 200 mlpgen --widths 256,512,256 --act gelu --batches 256,1024 --trials 48 --timeout 170 --out tuned > $R/tune_headline.txt 2>&1 ) 2> $R/tune_headline.time
tail -1 $R/tune_headline.txt | cut -c1-200; grep real $R/tune_headline.time
( time timeout 150 mlpgen --widths 784,1024,1024,10 --act relu --dtype fp32 --batches 1,64,1024 --trials 32 --timeout 125 --out tuned > $R/tune_fp32.txt 2>&1 ) 2> $R/tune_fp32.time
tail -1 $R/tune_fp32.txt | cut -c1-200; grep real $R/tune_fp32.time
cp $H.py $H.trials.json $W.py $W.trials.json $R/tuned/
mlpgen show $H.py > $R/show_headline.txt; mlpgen show $W.py > $R/show_fp32.txt
grep -E "^ *(1|64|256|1024) |graph" $R/show_headline.txt | head -10; grep -E "^ *(1|64|1024) |graph" $R/show_fp32.txt | head -6
timeout 60 mlpgen bench $H.py --no-compile --batches 1,64,1024 --json > $R/bench_headline.json 2> $R/bench_headline.txt; tail -8 $R/bench_headline.txt
