#!/usr/bin/env bash
# The public matrix on the GPU at hand: bench every shipped module, then render BENCHMARKS.md.
#   bash benchmarks/run_public_matrix.sh                 # every contender (torch.compile is slow)
#   bash benchmarks/run_public_matrix.sh --no-compile    # extra arguments go to mlpgen bench
#   bash benchmarks/run_public_matrix.sh --train ...     # training steps (mlpgen bench --train,
#                                                        # 16 rounds of 400 ms per cell)
#   MODULES="tuned/a.py tuned/b.py" bash benchmarks/run_public_matrix.sh ...   # only these
# Results go to benchmarks/results/$GPU/<module>.json, training steps to .../train/<module>.json
# (GPU: e.g. h200, from the device's name); a module whose bench fails keeps its recorded
# result, and the script exits 1. Training steps of the 64-wide MLP run up to 2^21 rows as well,
# the size its fields train at.
set -uo pipefail
cd "$(dirname "$0")/.."
GPU=${GPU:-$(python3 benchmarks/gpu_folder.py)}
out=benchmarks/results/$GPU
train=()
if [[ ${1:-} == --train ]]; then
    # a step is host-bound up to large batches: its per-call medians over more samples
    train=(--train --rounds 16 --rep 400)
    out=$out/train
    shift
fi
mkdir -p "$out"
status=0
for module in ${MODULES:-tuned/mlp_*.py}; do
    name=$(basename "$module" .py)
    batches=()
    if [[ ${#train[@]} -gt 0 && $name == mlp_64x64x64x64x64x3_* ]]; then
        batches=(--batches 1,64,1024,16384,262144,2097152)
    fi
    if mlpgen bench "$module" "${train[@]}" "${batches[@]}" --json "$@" > "$out/$name.json.new"; then
        mv "$out/$name.json.new" "$out/$name.json"
    else
        echo "run_public_matrix: mlpgen bench $module ${train[*]} failed" >&2
        rm -f "$out/$name.json.new"
        status=1
    fi
done
python benchmarks/render.py || status=1
exit $status
