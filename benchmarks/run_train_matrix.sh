#!/usr/bin/env bash
# Training steps on the GPU at hand: `mlpgen bench --train` of every shipped module, then render
# BENCHMARKS.md (its "Training step" section).
#   bash benchmarks/run_train_matrix.sh                  # every contender (torch.compile is slow)
#   bash benchmarks/run_train_matrix.sh --no-compile     # extra arguments go to mlpgen bench
# Results go to benchmarks/results/$GPU/train/<module>.json (GPU: e.g. h200, from the device's
# name); a module whose bench fails keeps its recorded result, and the script exits 1.
# The 64-wide MLP is benched up to 2^21 rows as well, the size its fields train at.
set -uo pipefail
cd "$(dirname "$0")/.."
GPU=${GPU:-$(python -c 'import torch; print(torch.cuda.get_device_name().split()[-1].lower())')}
out=benchmarks/results/$GPU/train
mkdir -p "$out"
status=0
for module in tuned/mlp_*.py; do
    name=$(basename "$module" .py)
    batches=()
    case $name in
        mlp_64x64x64x64x64x3_*) batches=(--batches 1,64,1024,16384,262144,2097152) ;;
    esac
    if mlpgen bench "$module" --train "${batches[@]}" --json "$@" > "$out/$name.json.new"; then
        mv "$out/$name.json.new" "$out/$name.json"
    else
        echo "run_train_matrix: mlpgen bench $module --train failed" >&2
        rm -f "$out/$name.json.new"
        status=1
    fi
done
python benchmarks/render.py || status=1
exit $status
