"""Session 10, on the CPU machine (no GPU): the Python of a FusedMLP lane call, the launch
replaced by a no-op (a lane for CPU tensors of 1 row set up by hand, as tests/test_lane.py
does), least of 5 repeats of 100000 calls, ns. Run from the repository root:
python3 docs/h200/s10/call_python_probe.py MODULE.py"""

import sys
import timeit

from pathlib import Path

import torch

from mlpgen.selfcheck import load_module

mod = load_module(Path(sys.argv[1]))
M = 1
fused = mod.FusedMLP(dtype=torch.float16)
def noop(*a): pass
lane = mod._Lane()
lane.run, lane.g0, lane.g1 = noop, 16, 1
lane.head = ("F", "META", None, None, None)
lane.keep, lane.tail = [], [4096, 8192, M]
lane.like, lane.device = mod._output_like(torch.empty(M, 256, dtype=torch.float16), M), -1
mod._LANES[(-1, M)] = lane
mod._current_device = lambda: -1
mod._raw_stream = lambda d: 77
torch.cuda.is_current_stream_capturing = lambda: False
x = torch.randn(M, 256).half()
buf = torch.empty(M, 256, dtype=torch.float16)
params = [p for lin in fused.linears for p in (lin.weight, lin.bias)]
n = 100000
with torch.no_grad():
    fused(x); fused(x, out=buf)
    for name, stmt in [("fused(x)", lambda: fused(x)), ("fused(x,out)", lambda: fused(x, out=buf)),
                       ("forward(x,out)", lambda: fused.forward(x, out=buf)),
                       ("_lean(x,params,out)", lambda: mod._lean(x, params, buf)),
                       ("_lean(x,params)", lambda: mod._lean(x, params))]:
        t = min(timeit.repeat(stmt, number=n, repeat=5)) / n * 1e9
        print(f"{name:22s} {t:8.0f} ns")
