#!/bin/bash
# Session 6, call 2: stream_tma with 1-3 programs per SM (occupancy_probe.py), then the headline
# tuned from scratch with the study in Optuna's journal file (the tune-time check).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r29; mkdir -p $R/tuned; M=$R/tuned/mlp_256x512x256_gelu_fp16.py
timeout 240 python3 docs/h200/s6/occupancy_probe.py $R > $R/occupancy_probe.out 2>&1; tail -n 20 $R/occupancy_probe.out | cut -c1-160
rm -rf $R/work
( time timeout 170 mlpgen --widths 256,512,256 --act gelu --out $R/tuned --json > $R/tune_headline.json 2> $R/tune_headline.err ) 2> $R/tune_headline.time
tail -n 1 $R/tune_headline.err | cut -c1-200; grep real $R/tune_headline.time
python3 -c "import json; d=json.load(open('$R/tune_headline.json'))['tuned']; print({k: d[k] for k in ('seconds','compile_seconds','total_seconds','measured')})"
rm -f $R/tuned/*.journal*; mlpgen show $M > $R/show_headline.txt 2>&1; sed -n 4,18p $R/show_headline.txt
tar czf $OUT/run29.tgz -C /tmp r29
