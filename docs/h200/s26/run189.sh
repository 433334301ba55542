#!/bin/bash
# Session 26, after run188: persist's new PDL release (after its last grid barrier) on the GPU:
# the linked-calls and persist GPU tests, the headline's 256 and 1024 rows re-tuned (the PDL pass
# measures persist with it), and those cells benched per call (no torch.compile). Outputs are
# written straight under $OUT/run189 (7 files), so a call stopped by the device budget keeps
# what finished.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=$OUT/run189; mkdir -p $R
H=tuned/mlp_256x512x256_gelu_fp16
S=$SECONDS
MLPGEN_TEST_GPU=1 timeout 70 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_kernels.py -k "linked_by_pdl or persist_many" > $R/tests.txt 2>&1
echo "tests rc $? $((SECONDS-S)) s" | tee -a $R/tests.txt; grep -E "^(FAILED|ERROR)|passed|failed" $R/tests.txt | head -6 | cut -c1-300
S=$SECONDS
timeout 110 mlpgen --widths 256,512,256 --act gelu --batches 256,1024 --trials 32 --timeout 90 --out tuned > $R/tune.txt 2>&1
echo "tune rc $? $((SECONDS-S)) s" | tee -a $R/tune.txt; tail -2 $R/tune.txt | cut -c1-200
cp $H.py $H.trials.json $R/
mlpgen show $H.py > $R/show.txt 2>&1; grep -E "^ *(1|64|256|1024) |graph" $R/show.txt | head -8
S=$SECONDS
timeout 70 mlpgen bench $H.py --no-compile --batches 1,64,256,1024 --json > $R/bench.json 2> $R/bench.txt
echo "bench rc $? $((SECONDS-S)) s" | tee -a $R/bench.txt; grep -v "^\[" $R/bench.txt | grep -E "^ *(batch|[0-9]+ )|^per-call|^GPU time" | tail -n 12 | cut -c1-130
