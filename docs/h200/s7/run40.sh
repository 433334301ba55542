#!/bin/bash
# Session 7: the headline re-tuned with candidates timed through mlp() (the lane), benched;
# then the GPU module + tune tests on the fixed lane (run39 found a torch-path plan bug).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r40; mkdir -p $R/tuned; M=$R/tuned/mlp_256x512x256_gelu_fp16.py
( time timeout 170 mlpgen --widths 256,512,256 --act gelu --out $R/tuned --json > $R/tune_headline.json 2> $R/tune_headline.err ) 2> $R/tune_headline.time
tail -n 1 $R/tune_headline.err | cut -c1-200; grep real $R/tune_headline.time
python3 -c "import json; d=json.load(open('$R/tune_headline.json'))['tuned']; print({k: d[k] for k in ('seconds','compile_seconds','total_seconds','measured')})"
rm -f $R/tuned/*.journal*; mlpgen show $M > $R/show_headline.txt 2>&1; sed -n 4,18p $R/show_headline.txt | cut -c1-160
( time timeout 170 mlpgen bench $M --no-compile --json --plot $R/bench_headline.png > $R/bench_headline.json 2> $R/bench_headline.txt ) 2> $R/bench_headline.time
grep -v "^\[" $R/bench_headline.txt | tail -n 32; grep real $R/bench_headline.time
( time MLPGEN_TEST_GPU=1 timeout 200 python3 -m pytest -q -m gpu tests/test_gpu_module.py tests/test_gpu_tune.py -p no:cacheprovider -rf > $R/gpu_tests_module_tune.txt 2>&1 ) 2> $R/gpu_tests_module_tune.time
grep -E "^(FAILED|E )|passed|failed" $R/gpu_tests_module_tune.txt | head -20; grep real $R/gpu_tests_module_tune.time
tar czf $OUT/run40.tgz -C /tmp r40
