#!/bin/bash
# Session 22, fifth call: the tuner times layered's and chain's configs over a long loop of
# host-fed calls too (measure.stream_us). Its GPU tests, then the headline's 1024 rows re-tuned
# into a copy of the shipped module (what it picks, and every strategy's best times from the
# trial log), and that copy benched at 1024 rows.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
export PYTHONUNBUFFERED=1
R=/tmp/run163; mkdir -p $R/tuned
( time MLPGEN_TEST_GPU=1 timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider -rfs tests/test_gpu_tune.py > $R/gpu_tests.txt 2>&1 ) 2> $R/gpu_tests.time
grep -E "^(FAILED|ERROR|E )|passed|failed" $R/gpu_tests.txt | head -12 | cut -c1-300; grep real $R/gpu_tests.time
cp tuned/mlp_256x512x256_gelu_fp16.py tuned/mlp_256x512x256_gelu_fp16.trials.json $R/tuned/
( time timeout 100 mlpgen --widths 256,512,256 --act gelu --batches 1024 --trials 24 --timeout 60 --out $R/tuned > $R/tune.txt 2>&1 ) 2> $R/tune.time
tail -1 $R/tune.txt | cut -c1-200; grep real $R/tune.time
mlpgen show $R/tuned/mlp_256x512x256_gelu_fp16.py | grep -E "^ *1024|batch" | head -4
python3 - $R/tuned/mlp_256x512x256_gelu_fp16.trials.json > $R/strategies.txt <<'P'
import json, sys
b = json.load(open(sys.argv[1]))["gpus"]["NVIDIA H200|sm90|132"]["buckets"]["1024"]
w, g = b["winner"], b.get("graph_winner") or {}
print("winner", w.get("kernel"), w.get("score"), "graph", g.get("kernel"), g.get("us"))
rows = [t for t in b["trials"] if t.get("verdict") == "ok" and "score" in t]
for t in sorted(rows, key=lambda t: t["score"])[:14]:
    c = t["config"]
    tile = f"{c['strategy']} {c['block_m']}x{c.get('block_n')} k{c.get('block_k')} w{c['num_warps']} s{c['num_stages']}{' pdl' if c.get('pdl') else ''}"
    print(f"{tile:38} us {t['us']:6.2f} host {t.get('host_us') or 0:6.2f} stream {t.get('stream_us') or 0:6.2f} score {t['score']:6.2f} {t['state']}")
P
cat $R/strategies.txt
timeout 40 mlpgen bench $R/tuned/mlp_256x512x256_gelu_fp16.py --no-compile --batches 1024 --json > $R/bench.json 2> $R/bench.txt; grep -A3 "^per-call" $R/bench.txt; grep "^note" $R/bench.txt
rm -f $R/tuned/*.py; tar czf $OUT/run163.tgz -C /tmp run163
