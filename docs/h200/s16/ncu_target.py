"""Session 16: a shipped module's winner at one batch launched 40 times (inputs fixed), for ncu
to profile one launch of (run123). Run from the repository root:
python3 docs/h200/s16/ncu_target.py MODULE.py BATCH"""

import sys
from pathlib import Path

import torch

from mlpgen.emit import read_module
from mlpgen.measure import device_problem
from mlpgen.selfcheck import load_module

path, m = Path(sys.argv[1]), int(sys.argv[2])
spec = read_module(path)[0]
mod = load_module(path)
cell = mod.TUNED["NVIDIA H200|sm90|132"][m]
x, w, b = device_problem(spec, m, "cuda", 3)
for _ in range(40):
    mod._launch(x, w, b, cell)
torch.cuda.synchronize()
print(cell["kernel"], "launched 40 times at", m, "rows")
