#!/bin/bash
# Session 16, sixth call: the final code (run122's table): the lane, native and GPU-tuner tests,
# then the bench without torch.compile twice at 1, 16, 64, 256 and 1024 rows (run123's bench
# ran after max-autotune's compile, on a slowed host).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r124; mkdir -p $R
H=mlp_256x512x256_gelu_fp16
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_native.py tests/test_gpu_tune.py tests/test_gpu_module.py -k "not graph and not capture" > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|SKIPPED|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
for i in 1 2; do
  timeout 70 mlpgen bench tuned/$H.py --no-compile --batches 1,16,64,256,1024 --json > $R/bench$i.json 2> $R/bench$i.txt
  echo "== bench $i"; grep -v "^\[" $R/bench$i.txt | grep -E "^ *(batch|[0-9]+ )|per-call|GPU time" | head -14 | cut -c1-120
done
tar czf $OUT/run124.tgz -C /tmp r124
