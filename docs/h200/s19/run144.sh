#!/bin/bash
# Session 19, third call: the headline's 256 and 1024 rows re-tuned from the earlier winners
# (the tuner now measures a previous CUDA-graph winner first too), the GPU tests of PDL-linked
# calls, chain, cluster and the shipped winners, the PDL probe on the shipped cells, two benches.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r144; mkdir -p $R/tuned
( time timeout 150 mlpgen --widths 256,512,256 --act gelu --batches 256,1024 --out tuned > $R/tune.txt 2>&1 ) 2> $R/tune.time
tail -3 $R/tune.txt | cut -c1-200; grep real $R/tune.time
cp tuned/mlp_256x512x256_gelu_fp16.py tuned/mlp_256x512x256_gelu_fp16.trials.json $R/tuned/
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py -k "linked or chain or shipped or cluster_kernels" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
timeout 120 python3 docs/h200/s19/pdl_calls_probe.py $R tuned/mlp_256x512x256_gelu_fp16.py:1,16,64,256,1024 > $R/probe.log 2>&1
cut -c1-250 $R/probe.log | tail -8
for i in 1 2; do
timeout 100 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --no-compile --batches 1,16,64,256,1024 --json > $R/bench$i.json 2> $R/bench$i.txt
grep -A7 "per-call\|Per-call\|host" $R/bench$i.txt | head -9 | cut -c1-200
done
tar czf $OUT/run144.tgz -C /tmp r144
