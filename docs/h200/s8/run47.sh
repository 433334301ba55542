#!/bin/bash
# Session 8, fourth call: the chain strategy (every layer a Triton GEMM, linked by programmatic
# dependent launch) on the GPU: its kernel and lane tests, the headline re-tuned with it in the
# space, the re-tuned module's wgmma test and bench.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r47; mkdir -p $R/tuned; M=$R/tuned/mlp_256x512x256_gelu_fp16.py
( time MLPGEN_TEST_GPU=1 timeout 240 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py tests/test_gpu_module.py -k "chain or lane" -p no:cacheprovider -rf > $R/gpu_tests_chain.txt 2>&1 ) 2> $R/gpu_tests_chain.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_chain.txt | head -20; grep real $R/gpu_tests_chain.time
( time timeout 200 mlpgen --widths 256,512,256 --act gelu --out $R/tuned --json > $R/tune_headline.json 2> $R/tune_headline.err ) 2> $R/tune_headline.time
tail -n 1 $R/tune_headline.err | cut -c1-200; grep real $R/tune_headline.time
rm -f $R/tuned/*.journal*; mlpgen show $M > $R/show_headline.txt 2>&1; sed -n 4,22p $R/show_headline.txt | cut -c1-170
cp $M tuned/
( time MLPGEN_TEST_GPU=1 timeout 120 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py -k "large_batch_winners" -p no:cacheprovider -rf > $R/gpu_tests_winners.txt 2>&1 ) 2> $R/gpu_tests_winners.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_winners.txt | head -10
( time timeout 120 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --no-compile --json --plot $R/bench_headline.png > $R/bench_headline.json 2> $R/bench_headline.txt ) 2> $R/bench_headline.time
grep -v "^\[" $R/bench_headline.txt | grep -E "^ *[0-9]+ |^per-call|^GPU|^note" | head -n 30 | cut -c1-100
tar czf $OUT/run47.tgz -C /tmp r47
