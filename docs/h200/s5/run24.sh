#!/bin/bash
# Session 5, call 3: the packed fp16 activations on the GPU, the headline tuned from scratch with
# them and with 2-stage stream tiles, its bench, then the GPU kernel tests.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r24; mkdir -p $R/tuned; M=$R/tuned/mlp_256x512x256_gelu_fp16.py
MLPGEN_TEST_GPU=1 timeout 60 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py -k packed -p no:cacheprovider -rf > $R/gpu_tests_packed.txt 2>&1
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_packed.txt | head -12
( time timeout 180 mlpgen --widths 256,512,256 --act gelu --out $R/tuned --json > $R/tune_headline.json 2> $R/tune_headline.err ) 2> $R/tune_headline.time
tail -n 1 $R/tune_headline.err | cut -c1-200; grep real $R/tune_headline.time
rm -f $R/tuned/*.db; mlpgen show $M > $R/show_headline.txt 2>&1; sed -n 4,22p $R/show_headline.txt
( time timeout 140 mlpgen bench $M --no-compile --json --plot $R/bench_headline.png > $R/bench_headline.json 2> $R/bench_headline.txt ) 2> $R/bench.time
grep -v "^\[" $R/bench_headline.txt | tail -n 32; grep real $R/bench.time
( time MLPGEN_TEST_GPU=1 timeout 170 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py -k "not packed" -p no:cacheprovider -rf > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
tar czf $OUT/run24.tgz -C /tmp r24
