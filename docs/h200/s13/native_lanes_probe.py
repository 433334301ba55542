"""Session 13: whether calls of the wide public-matrix modules take the native lane (run84's
bench notes name it for none of the public matrix: the note came after run84). For each module
and a few batch sizes: one call, then what _open_lane saw: the lane's kind, whether its launch
is triton 3.6's verified C launch, the launcher's scratch sizes, whether the kernel's arguments
fit native_lane.cpp's layout, the packed metadata, and the native lanes registered.
Run from the repository root: python3 docs/h200/s13/native_lanes_probe.py [NAME...]"""

import sys
from pathlib import Path

import torch

from mlpgen.emit import read_module
from mlpgen.measure import device_problem
from mlpgen.selfcheck import load_module

NAMES = sys.argv[1:] or ["mlp_784x1024x1024x10_relu_fp32", "mlp_1024x4096x1024_gelu_tanh_bf16",
                         "mlp_256x512x256_gelu_fp16"]
for name in NAMES:
    path = Path("tuned") / f"{name}.py"
    spec = read_module(path)[0]
    mod = load_module(path)
    for m in (1, 64, 1024):
        x, w, b = device_problem(spec, m, "cuda", 0)
        with torch.no_grad():
            mod.mlp(x, w, b)
            mod.mlp(x, w, b)
        torch.cuda.synchronize()
        lane = mod._LANES.get((0, m))
        plan = mod._PLANS.get((0, m, False))
        row = [name, m, plan.strategy if plan else None]
        if lane is None:
            row.append("no lane")
        elif lane.call is not None:
            row.append("plan lane")
        else:
            key = (plan.kernel, plan.device, plan.num_warps, plan.num_stages)
            compiled = mod._COMPILED.get(key + (True,) * mod._CALLER_TENSORS)
            run = compiled.run
            args = mod._native_arguments(compiled, [0] * mod._CALLER_TENSORS + lane.tail)
            sig = getattr(getattr(compiled, "src", None), "signature", {})
            row += ["kernel lane", f"C launch {lane.run is not run}",
                    f"scratch {run.global_scratch_size}/{run.profile_scratch_size}",
                    f"meta {compiled.packed_metadata}", f"args {'ok' if args else None}",
                    f"signature {list(sig.values())}"]
        state = mod._native_state
        row.append(f"native lanes {mod._native_module().lanes(state) if state else None}")
        print(" | ".join(map(str, row)), flush=True)
