#!/bin/bash
# Session 19, second call: the GPU tests of PDL-linked calls (and chain, cluster, the shipped
# winners), the headline re-tuned with the tuner's PDL pass, and its bench.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r143; mkdir -p $R/tuned
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py -k "linked or chain or shipped or cluster_kernels" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -20 | cut -c1-300; grep real $R/gpu_tests.time
( time timeout 260 mlpgen --widths 256,512,256 --act gelu --batches 1,16,64,256,1024 --out tuned > $R/tune.txt 2>&1 ) 2> $R/tune.time
tail -12 $R/tune.txt | cut -c1-200; grep real $R/tune.time
cp tuned/mlp_256x512x256_gelu_fp16.py tuned/mlp_256x512x256_gelu_fp16.trials.json $R/tuned/
timeout 120 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --no-compile --batches 1,16,64,256,1024 --json > $R/bench.json 2> $R/bench.txt
tail -14 $R/bench.txt | cut -c1-200
tar czf $OUT/run143.tgz -C /tmp r143
