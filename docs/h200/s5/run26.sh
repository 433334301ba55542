#!/bin/bash
# Session 5, call 5: the TMA stream strategy and packed activations on the GPU, the headline tuned
# from scratch with stream_tma in the space, its bench, then the module and kernel GPU tests.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r26; mkdir -p $R/tuned; M=$R/tuned/mlp_256x512x256_gelu_fp16.py
( time MLPGEN_TEST_GPU=1 timeout 90 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py -k "stream_tma or packed" -p no:cacheprovider -rf > $R/gpu_tests_tma.txt 2>&1 ) 2> $R/gpu_tests_tma.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_tma.txt | head -12; grep real $R/gpu_tests_tma.time
( time timeout 150 mlpgen --widths 256,512,256 --act gelu --out $R/tuned --json > $R/tune_headline.json 2> $R/tune_headline.err ) 2> $R/tune_headline.time
tail -n 1 $R/tune_headline.err | cut -c1-200; grep real $R/tune_headline.time
rm -f $R/tuned/*.db; mlpgen show $M > $R/show_headline.txt 2>&1; sed -n 4,18p $R/show_headline.txt
( time timeout 60 mlpgen bench $M --no-compile --json --plot $R/bench_headline.png > $R/bench_headline.json 2> $R/bench_headline.txt ) 2> $R/bench.time
grep -v "^\[" $R/bench_headline.txt | tail -n 32; grep real $R/bench.time
( time MLPGEN_TEST_GPU=1 timeout 120 python3 -m pytest -q -m gpu tests/test_gpu_module.py -p no:cacheprovider -rf > $R/gpu_tests_module.txt 2>&1 ) 2> $R/gpu_tests_module.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_module.txt | head -12; grep real $R/gpu_tests_module.time
( time MLPGEN_TEST_GPU=1 timeout 100 python3 -m pytest -q -x -m gpu tests/test_gpu_kernels.py -k "not stream_tma and not packed" -p no:cacheprovider -rf > $R/gpu_tests_kernels.txt 2>&1 ) 2> $R/gpu_tests_kernels.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_kernels.txt | head -12; tail -c 300 $R/gpu_tests_kernels.txt; grep real $R/gpu_tests_kernels.time
tar czf $OUT/run26.tgz -C /tmp r26
