#!/bin/bash
# Session 10, last call: the three GPU tests run64's time limit cut off (run64 ran the other 99
# of 102: 98 passed, 1 skipped), and the new test of every shipped module's H200 winners (call
# and CUDA-graph configs, bf16 ones too) against the fp32 reference, run65's re-tunes in. First:
# the re-tuned 1024,4096,1024 module's calls at 64 and 1024 rows against the previous module's
# and eager's, interleaved (docs/h200/s10/wide_probe.py; run65's bench had it at 0.87x eager).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r66; mkdir -p $R
( time timeout 150 python3 docs/h200/s10/wide_probe.py $R > $R/wide_probe.txt 2> $R/wide_probe.err ) 2> $R/wide_probe.time
cat $R/wide_probe.txt; tail -n 4 $R/wide_probe.err | cut -c1-300; grep real $R/wide_probe.time
( time MLPGEN_TEST_GPU=1 timeout 380 python3 -m pytest -q -m gpu -p no:cacheprovider -rf \
    "tests/test_gpu_tune.py::test_retune_end_to_end_writes_verified_winners" \
    "tests/test_gpu_tune.py::test_measurement_of_a_wide_spec_is_the_torch_path" \
    "tests/test_profile.py::test_profile_on_gpu_counts_kernels" \
    tests/test_gpu_kernels.py::test_shipped_winners_for_this_gpu_are_correct > $R/gpu_tests_rest.txt 2>&1 ) 2> $R/gpu_tests_rest.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_rest.txt | head -20; grep real $R/gpu_tests_rest.time
tar czf $OUT/run66.tgz -C /tmp r66
