#!/bin/bash
# Session 9, first call: rowblock and split with every weight tile loaded before the first dot
# (A/B against the modules before this session, same configs, one process), then the GPU
# kernel tests of the changed templates and the split/rowblock-serving module tests.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r52; mkdir -p $R
( time timeout 300 python3 docs/h200/s9/prefetch_ab_probe.py > $R/prefetch_ab.txt 2> $R/prefetch_ab.err ) 2> $R/prefetch_ab.time
cat $R/prefetch_ab.txt | cut -c1-190; tail -n 3 $R/prefetch_ab.err; grep real $R/prefetch_ab.time
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu tests/test_gpu_kernels.py -k "headline_spec_default or odd_depth4 or split_many or fast_launch or activation" -p no:cacheprovider -rf > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests.txt | head -20; grep real $R/gpu_tests.time
tar czf $OUT/run52.tgz -C /tmp r52
