"""Where a module call's host time goes on the H200 host: per-call time (loops of 200 calls then
one sync; min and median of 15 loops) of eager nn.Sequential, FusedMLP(x), mlp(), _forward(),
_execute() on the cached plan, and torch.cuda.is_current_stream_capturing(), under no_grad.
python .probe/api_probe.py OUT"""
import importlib.util
import statistics
import sys
import time

import torch


def load(path):
    spec = importlib.util.spec_from_file_location(path.split("/")[-1][:-3], path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def per_call(fn, n=200, loops=15):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(loops):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) / n * 1e6)
    return min(out), statistics.median(out)


lines = []
with torch.no_grad():
    for path, m in (("tuned/mlp_256x512x256_gelu_fp16.py", 1),
                    ("tuned/mlp_256x512x256_gelu_fp16.py", 1024),
                    ("tuned/mlp_1024x4096x1024_gelu_tanh_bf16.py", 1024)):
        mod = load(path)
        f = mod.FusedMLP(device="cuda")
        seq = f.to_module()
        x = torch.randn(m, mod.WIDTHS[0], device="cuda", dtype=mod.DTYPE)
        W = [lin.weight for lin in f.linears]
        B = [lin.bias for lin in f.linears]
        f(x)
        plan = mod._PLANS[(0, m, False)]
        rows = {
            "eager seq(x)": lambda: seq(x),
            "FusedMLP(x)": lambda: f(x),
            "mlp(x, W, B)": lambda: mod.mlp(x, W, B),
            "_forward": lambda: mod._forward(x, W, B),
            "_execute(plan)": lambda: mod._execute(plan, x, W, B),
            "reference (torch path)": lambda: mod.reference(x, W, B),
            "is_current_stream_capturing": lambda: torch.cuda.is_current_stream_capturing(),
        }
        head = f"{mod.NAME} M={m} ({plan.strategy})"
        print(head, flush=True)
        lines.append(head)
        for name, fn in rows.items():
            lo, med = per_call(fn)
            lines.append(f"  {name:30s} min {lo:7.2f}  median {med:7.2f} us")
            print(lines[-1], flush=True)
open(f"{sys.argv[1]}/api_probe.log", "w").write("\n".join(lines) + "\n")
