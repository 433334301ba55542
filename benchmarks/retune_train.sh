#!/usr/bin/env bash
# Search the training step of shipped modules on the GPU at hand and bench it against eager:
#   bash benchmarks/retune_train.sh [NAME...]   NAME: a module of tuned/ (default: the three
#                                               modules the training targets name)
# 1. mlpgen retune --train-only: each bucket's training step searched (the torch backward and
#    the kernel configs), the forward cells kept;
# 2. mlpgen bench --train --json into benchmarks/results/$GPU/train/NAME.json (the narrow
#    module also at 2^21 rows, past its largest bucket).
# Then render BENCHMARKS.md: python3 benchmarks/render.py
set -euo pipefail
cd "$(dirname "$0")/.."
GPU=${GPU:-$(python3 -c 'import torch; print(torch.cuda.get_device_name().split()[-1].lower())')}
BATCHES=${BATCHES:-1,64,1024,16384,262144}
TIMEOUT=${TIMEOUT:-120}  # seconds the training search of a module may take
names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
    names=(mlp_64x64x64x64x64x3_relu_fp16 mlp_256x512x256_gelu_fp16 mlp_1024x4096x1024_gelu_tanh_bf16)
fi
mkdir -p "benchmarks/results/$GPU/train"
for name in "${names[@]}"; do
    batches=$BATCHES
    [[ $name == mlp_64x64x64x64x64x3_relu_fp16 ]] && batches=$BATCHES,2097152
    mlpgen retune "tuned/$name.py" --train-only --timeout "$TIMEOUT"
    mlpgen bench "tuned/$name.py" --train --no-compile --batches "$batches" --json \
        > "benchmarks/results/$GPU/train/$name.json"
done
