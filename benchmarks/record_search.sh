#!/usr/bin/env bash
# Record, on the GPU at hand, the data the tuner's search is judged on:
#   exhaustive   every feasible candidate of four buckets, for each named spec
#                -> benchmarks/results/$GPU/exhaustive/<module>.trials.json
#   cold         the default tune from an empty triton cache into an empty folder, timed
#                (mlpgen.runtime's native lane, built once per machine and install, is built
#                before the clock starts: it is no part of a tune)
#                -> benchmarks/results/$GPU/tune/cold_<module>.json
# Usage: bash benchmarks/record_search.sh exhaustive|cold SPEC...
#   KEEP=DIR: copy each cold tune's module (and trial log) into DIR as well
#   SPEC: the mlpgen arguments of one spec joined by ':', e.g. 256,512,256:gelu:fp16
set -euo pipefail
cd "$(dirname "$0")/.."
mode=$1
shift
GPU=${GPU:-$(python3 benchmarks/gpu_folder.py)}
BUCKETS=${BUCKETS:-1,64,4096,65536}
mlpgen=(python3 -m mlpgen.cli)
for spec in "$@"; do
    IFS=: read -r widths act dtype <<< "$spec"
    name="mlp_${widths//,/x}_${act}_${dtype}"
    work=$(mktemp -d)
    case $mode in
    exhaustive)
        mkdir -p "benchmarks/results/$GPU/exhaustive"
        "${mlpgen[@]}" --widths "$widths" --act "$act" --dtype "$dtype" --out "$work" \
            --exhaustive --batches "$BUCKETS" --json > "$work/summary.json"
        cp "$work/$name.trials.json" "benchmarks/results/$GPU/exhaustive/$name.trials.json"
        ;;
    cold)
        mkdir -p "benchmarks/results/$GPU/tune"
        python3 -c 'from mlpgen.runtime import native; native.build()'
        start=$(date +%s.%N)
        TRITON_CACHE_DIR="$work/triton-cache" "${mlpgen[@]}" --widths "$widths" --act "$act" \
            --dtype "$dtype" --out "$work" --json > "$work/summary.json"
        end=$(date +%s.%N)
        python3 - "$work/summary.json" "$start" "$end" "$widths" "$act" "$dtype" \
            > "benchmarks/results/$GPU/tune/cold_$name.json" <<'PY'
import json, re, sys
summary, start, end, widths, act, dtype = sys.argv[1:]
data = json.load(open(summary))
for part in (data, data.get("tuned", {})):  # the throwaway folder's path says nothing
    for key in ("module", "trial_log"):
        if key in part:
            part[key] = re.sub(r"^/tmp/[^/]+/", "<out>/", part[key])
data["wall_seconds"] = round(float(end) - float(start), 1)
data["cold"] = True
data["native_lane"] = "built before the clock (once per machine and install)"
data["command"] = (f"TRITON_CACHE_DIR=<empty> mlpgen --widths {widths} --act {act} "
                   f"--dtype {dtype} --out <empty> --json")
print(json.dumps(data, indent=1))
PY
        if [[ -n ${KEEP:-} ]]; then
            mkdir -p "$KEEP" && cp "$work/$name".* "$KEEP/"
        fi
        ;;
    *) echo "record_search.sh: mode must be exhaustive or cold, not '$mode'" >&2; exit 2 ;;
    esac
    rm -rf "$work"
done
