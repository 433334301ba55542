#!/bin/bash
# Session 6, call 3: the lookahead probe; 128,128,128 silu bf16 re-tuned with this session's space
# (2-stage stream, stream_tma) and journal storage; benches of the shipped headline (run29's tune)
# and of the re-tuned 128^3 module.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r30; mkdir -p $R/tuned; S=mlp_128x128x128_silu_bf16
timeout 150 python3 docs/h200/s6/lookahead_probe.py $R > $R/lookahead_probe.out 2>&1; tail -n 16 $R/lookahead_probe.out | cut -c1-160; rm -rf $R/work
cp tuned/$S.py $R/tuned/
( time timeout 80 mlpgen --widths 128,128,128 --act silu --dtype bf16 --out $R/tuned --batches 1,64,1024,16384,262144 --trials 8 --timeout 40 --json > $R/tune_$S.json 2> $R/tune_$S.err ) 2> $R/tune_$S.time
tail -n 1 $R/tune_$S.err | cut -c1-200; grep real $R/tune_$S.time
rm -f $R/tuned/*.journal*; mlpgen show $R/tuned/$S.py > $R/show_$S.txt 2>&1; sed -n 4,16p $R/show_$S.txt | cut -c1-150
( time timeout 150 mlpgen bench tuned/mlp_256x512x256_gelu_fp16.py --no-compile --json --plot $R/bench_headline.png > $R/bench_headline.json 2> $R/bench_headline.txt ) 2> $R/bench_headline.time
grep -v "^\[" $R/bench_headline.txt | tail -n 32; grep real $R/bench_headline.time
( time timeout 100 mlpgen bench $R/tuned/$S.py --no-compile --json > $R/bench_$S.json 2> $R/bench_$S.txt ) 2> $R/bench_$S.time
grep -v "^\[" $R/bench_$S.txt | tail -n 22; grep real $R/bench_$S.time
tar czf $OUT/run30.tgz -C /tmp r30
