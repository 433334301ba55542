#!/usr/bin/env bash
# Two tuner processes on the GPU at hand against one journal file: they split the buckets'
# candidates through claims in the storage, measure no config twice, and the module is written
# once with every bucket. Records per process what it measured and, from the journal, how many
# configs of any study were measured more than once.
#   bash benchmarks/record_shared_tune.sh [SPEC]       SPEC as in record_search.sh (default headline)
#   -> benchmarks/results/$GPU/tune/shared_<module>.json
set -euo pipefail
cd "$(dirname "$0")/.."
spec=${1:-256,512,256:gelu:fp16}
IFS=: read -r widths act dtype <<< "$spec"
name="mlp_${widths//,/x}_${act}_${dtype}"
GPU=${GPU:-$(python3 benchmarks/gpu_folder.py)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m mlpgen.cli --widths "$widths" --act "$act" --dtype "$dtype" --out "$work" --no-tune \
    > /dev/null
start=$(date +%s.%N)
for p in 1 2; do
    python3 -m mlpgen.cli retune "$work/$name.py" --storage "$work/shared.journal" --json \
        > "$work/process$p.json" &
done
wait
end=$(date +%s.%N)
mkdir -p "benchmarks/results/$GPU/tune"
python3 - "$work" "$name" "$start" "$end" "$spec" > "benchmarks/results/$GPU/tune/shared_$name.json" <<'PY'
import json, sys
from collections import Counter
from pathlib import Path

import optuna

from mlpgen.emit import read_module
from mlpgen.tune import make_storage

work, name, start, end, spec = sys.argv[1:]
work = Path(work)
storage = make_storage(str(work / "shared.journal"))
twice = {}
for summary in optuna.get_all_study_summaries(storage):
    if summary.study_name.endswith("|claims"):
        continue
    study = optuna.load_study(study_name=summary.study_name, storage=storage)
    measured = Counter(
        json.dumps(t.user_attrs["config"], sort_keys=True)
        for t in study.get_trials(deepcopy=False)
        if "measurement" in t.user_attrs
    )
    twice[summary.study_name] = sum(n - 1 for n in measured.values() if n > 1)
_, tuned, _ = read_module(work / f"{name}.py")
processes = [json.loads((work / f"process{p}.json").read_text()) for p in (1, 2)]
print(json.dumps({
    "command": f"bash benchmarks/record_shared_tune.sh {spec}",
    "wall_seconds": round(float(end) - float(start), 1),
    "processes": [
        {"measured": p["measured"], "seconds": p["seconds"], "wrote_module": p["written"]}
        for p in processes
    ],
    "measured_twice": sum(twice.values()),
    "studies": len(twice),
    "buckets_in_module": {gpu: sorted(int(b) for b in cells) for gpu, cells in tuned.items()
                          if gpu != "default"},
}, indent=1))
PY
cat "benchmarks/results/$GPU/tune/shared_$name.json"
