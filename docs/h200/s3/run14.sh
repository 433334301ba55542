#!/bin/bash
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r14; mkdir -p $R; M=tuned/mlp_256x512x256_gelu_fp16.py
( time MLPGEN_TEST_GPU=1 timeout 110 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py -k "layered or split" -p no:cacheprovider > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
tail -4 $R/gpu_tests.txt; grep real $R/gpu_tests.time
( time timeout 110 mlpgen retune $M --batches 1,16,64,256,1024 --json > $R/retune_small.json 2> $R/retune_small.err ) 2> $R/retune_small.time
tail -1 $R/retune_small.err | cut -c1-200; grep real $R/retune_small.time
rm -f tuned/*.db; cp $M tuned/*.trials.json $R/; mlpgen show $M > $R/show_headline.txt 2>&1; sed -n 4,18p $R/show_headline.txt
( time timeout 150 mlpgen bench $M --no-compile --json --plot $R/bench_headline.png > $R/bench_headline.json 2> $R/bench_headline.txt ) 2> $R/bench.time
tail -14 $R/bench_headline.txt; grep real $R/bench.time
timeout 45 python3 .probe/layered_act.py $R 2>&1 | tail -3
( time timeout 120 mlpgen bench $M --batches 65536,262144 --only eager,compile,max-autotune,mlpgen --budget 110 --json > $R/bench_compile.json 2> $R/bench_compile.txt ) 2> $R/bench_compile.time
tail -8 $R/bench_compile.txt; grep real $R/bench_compile.time
tar czf $OUT/run14.tgz -C /tmp r14
