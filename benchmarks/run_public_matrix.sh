#!/usr/bin/env bash
# The public matrix on the GPU at hand: bench every shipped module, then render BENCHMARKS.md.
#   bash benchmarks/run_public_matrix.sh                 # every contender (torch.compile is slow)
#   bash benchmarks/run_public_matrix.sh --no-compile    # extra arguments go to mlpgen bench
# Results go to benchmarks/results/$GPU/<module>.json (GPU: e.g. h200, from the device's name);
# a module whose bench fails keeps its recorded result, and the script exits 1.
set -uo pipefail
cd "$(dirname "$0")/.."
GPU=${GPU:-$(python -c 'import torch; print(torch.cuda.get_device_name().split()[-1].lower())')}
out=benchmarks/results/$GPU
mkdir -p "$out"
status=0
for module in tuned/mlp_*.py; do
    name=$(basename "$module" .py)
    if mlpgen bench "$module" --json "$@" > "$out/$name.json.new"; then
        mv "$out/$name.json.new" "$out/$name.json"
    else
        echo "run_public_matrix: mlpgen bench $module failed" >&2
        rm -f "$out/$name.json.new"
        status=1
    fi
done
python benchmarks/render.py || status=1
exit $status
