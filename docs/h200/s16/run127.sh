#!/bin/bash
# Session 16, ninth call: the headline's 256 rows with chain as its CUDA-graph winner
# (GRAPH_TIE, re-judged from the trial log): the shipped-winner GPU test and the bench at 64,
# 256 and 1024 rows without torch.compile.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r127; mkdir -p $R
H=mlp_256x512x256_gelu_fp16
( time MLPGEN_TEST_GPU=1 timeout 100 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py -k "shipped" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -8 | cut -c1-300; grep real $R/gpu_tests.time
timeout 60 mlpgen bench tuned/$H.py --no-compile --batches 64,256,1024 --json > $R/bench.json 2> $R/bench.txt
echo "== bench $H"; grep -v "^\[" $R/bench.txt | grep -E "^ *(batch|[0-9]+ )|per-call|GPU time|note" | head -14 | cut -c1-130
tar czf $OUT/run127.tgz -C /tmp r127
