#!/bin/bash
# Session 10, third call: README's main job from nothing (a fresh tune of the headline, default
# trials, timed, into a scratch folder) and its table beside the shipped module's; then every
# GPU test on this session's code and shipped modules.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r64; mkdir -p $R/fresh
( time timeout 220 mlpgen --widths 256,512,256 --act gelu --out $R/fresh > $R/tune.txt 2> $R/tune.err ) 2> $R/tune.time
tail -n 25 $R/tune.txt; tail -n 3 $R/tune.err | cut -c1-300; grep real $R/tune.time
mlpgen show $R/fresh/mlp_256x512x256_gelu_fp16.py > $R/show_fresh.txt 2>&1; cat $R/show_fresh.txt | head -40
mlpgen show tuned/mlp_256x512x256_gelu_fp16.py > $R/show_shipped.txt 2>&1
( time MLPGEN_TEST_GPU=1 timeout 330 python3 -m pytest -q -m gpu tests/ -p no:cacheprovider -rf > $R/gpu_tests_all.txt 2>&1 ) 2> $R/gpu_tests_all.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_all.txt | head -20; grep real $R/gpu_tests_all.time
rm -f $R/fresh/*.py $R/fresh/*.journal
tar czf $OUT/run64.tgz -C /tmp r64
