#!/bin/bash
# Session 12: the bench's note on the native lane, checked on the GPU (a short bench).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1 MLPGEN_CACHE=/tmp/mlpgen_cache
R=/tmp/r91; mkdir -p $R
timeout 120 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --batches 1,1024,65536 --only eager,mlpgen --no-compile --json > $R/bench_note.json 2> $R/bench_note.txt
grep -v "^\[" $R/bench_note.txt | grep -E "^ *[0-9]+ |^note" | cut -c1-160
tar czf $OUT/run91.tgz -C /tmp r91
