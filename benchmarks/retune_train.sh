#!/usr/bin/env bash
# Search the training step of shipped modules on the GPU at hand and bench it against eager:
#   bash benchmarks/retune_train.sh [NAME...]   NAME: a module of tuned/ (default: the three
#                                               modules the training targets name)
# mlpgen retune --train-only searches each bucket's training step (the torch backward and the
# kernel configs), the forward cells kept (a module without this GPU's table: mlpgen retune
# --train, forward and training step); run_public_matrix.sh --train then benches those
# modules' training steps and renders BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
TIMEOUT=${TIMEOUT:-120}  # seconds the training search of a module may take
names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
    names=(mlp_64x64x64x64x64x3_relu_fp16 mlp_256x512x256_gelu_fp16 mlp_1024x4096x1024_gelu_tanh_bf16)
fi
modules=()
for name in "${names[@]}"; do
    # a module without this GPU's forward table is tuned whole (forward, then training step)
    if python3 - "tuned/$name.py" <<'PY'; then
import sys
from mlpgen.emit import read_module
from mlpgen.tune import gpu_key
sys.exit(0 if gpu_key(0) in read_module(sys.argv[1])[1] else 1)
PY
        mlpgen retune "tuned/$name.py" --train-only --timeout "$TIMEOUT"
    else
        mlpgen retune "tuned/$name.py" --train --timeout "$TIMEOUT"
    fi
    modules+=("tuned/$name.py")
done
MODULES="${modules[*]}" bash benchmarks/run_public_matrix.sh --train --no-compile
