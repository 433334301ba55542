#!/bin/bash
# Session 15, fourth call: the re-tuned headline (run113's table, one-row cluster tiles at 1 and
# 16 rows): its recorded GPU times measured again as the tuner measures them, the probe of
# run111 again with the final store, and every contender (torch.compile's two modes too) at 1,
# 16, 64 and 1024 rows.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/r114; mkdir -p $R
H=mlp_256x512x256_gelu_fp16
timeout 60 python3 docs/h200/s13/recheck_probe.py tuned/$H.py 1 16 64 256 2>&1 | tee $R/recheck.txt
( time timeout 150 python3 docs/h200/s15/fma_probe.py $R > $R/probe.txt 2> $R/probe.err ) 2> $R/probe.time
cat $R/probe.txt | grep -v checked; tail -n 3 $R/probe.err | cut -c1-300; grep real $R/probe.time
( time timeout 300 mlpgen bench tuned/$H.py --batches 1,16,64,1024 --json --plot $R/bench.png > $R/bench_all.json 2> $R/bench_all.txt ) 2> $R/bench_all.time
grep -v "^\[" $R/bench_all.txt | grep -E "^ *(batch|[0-9]+ )|note|per-call|GPU time|graph" | tail -n 24 | cut -c1-160; grep real $R/bench_all.time
rm -f $R/probe_*.py; tar czf $OUT/run114.tgz -C /tmp r114
