#!/usr/bin/env bash
# Re-tune shipped modules from nothing on the GPU at hand, compare each re-tune with the shipped
# module side by side in one process, and ship the re-tunes that are nowhere slower:
#   bash benchmarks/retune_shipped.sh [NAME...]     NAME: a module of tuned/ (default: all)
# 1. each module's spec is tuned cold (record_search.sh cold: its tune time is recorded under
#    benchmarks/results/$GPU/tune/), the new module and its trial log kept aside;
# 2. compare_modules.py times the shipped and the new module per call at $BATCHES, into
#    benchmarks/results/$GPU/compare/retuned.json, and gives a shipped module its re-tune's
#    entries for this GPU where at every batch that is within LIMIT of its time or runs the same
#    code (the same config rendered by the same templates); other GPUs' entries stay, and so
#    do the shipped training steps (a cold tune searches none: retune_train.sh does). Other
#    modules' rows of earlier runs stay in the table, so the modules can be re-tuned a few at a
#    time (a cold tune takes about a minute).
#   SEEDED=1: step 1 is `mlpgen retune` of a copy of each shipped module instead, a search that
#   measures this GPU's shipped winners first (its provenance names the retune)
# Then bench what was replaced: bash benchmarks/run_public_matrix.sh --no-compile
set -euo pipefail
cd "$(dirname "$0")/.."
GPU=${GPU:-$(python3 benchmarks/gpu_folder.py)}
BATCHES=${BATCHES:-1,64,1024,16384,262144}
LIMIT=${LIMIT:-1.03}
names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
    for module in tuned/mlp_*.py; do names+=("$(basename "$module" .py)"); done
fi
new=$(mktemp -d)
trap 'rm -rf "$new"' EXIT
for name in "${names[@]}"; do
    if [[ -n ${SEEDED:-} ]]; then
        cp "tuned/$name.py" "tuned/$name.trials.json" "$new/"
        python3 -m mlpgen.cli retune "$new/$name.py"
        continue
    fi
    spec=$(python3 -c 'import sys; from mlpgen.emit import read_module
s = read_module(sys.argv[1])[0]; print(":".join([",".join(map(str, s.widths)), s.act, s.dtype]))' \
        "tuned/$name.py")
    KEEP=$new bash benchmarks/record_search.sh cold "$spec"
done
mkdir -p "benchmarks/results/$GPU/compare"
python3 benchmarks/compare_modules.py tuned "$new" --batches "$BATCHES" --merge --ship "$LIMIT" \
    --json "benchmarks/results/$GPU/compare/retuned.json" \
    --title "Re-tuned modules against the modules shipped before" \
    --note "A re-tune ships where at every batch it takes at most $LIMIT times the shipped module's time or runs the same code (config and templates)."
sed -i "s|$new|<re-tunes>|g" "benchmarks/results/$GPU/compare/retuned.json"  # a temporary folder
