#!/bin/bash
# Session 20, third call: the re-tuned wide modules' GPU tests (every shipped winner checked),
# and the headline bench without torch.compile (run149's ran after it).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r150; mkdir -p $R
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/ -k "shipped" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -8 | cut -c1-300; grep real $R/gpu_tests.time
timeout 90 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --no-compile --batches 1,16,64,256,1024 --json > $R/bench.json 2> $R/bench.txt; tail -16 $R/bench.txt
tar czf $OUT/run150.tgz -C /tmp r150
