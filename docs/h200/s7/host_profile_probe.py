"""Session 7 (run38 on the previous templates, run39 with the lane): where a call's host time goes, step by step, on the shipped headline module
(tuned/mlp_256x512x256_gelu_fp16.py) at small batch under torch.no_grad(): FusedMLP.__call__
down through mlp(), _mlp2d(), _forward(), _execute(), the launcher, and the torch calls each
step makes. Per-call times: loops of 200 calls and one sync, min and median of 15 loops.
Run from the repository root: python3 docs/h200/s7/host_profile_probe.py OUT"""

import statistics
import sys
import time
from pathlib import Path

import torch

from mlpgen.bench import build_fused, build_sequential
from mlpgen.emit import read_module
from mlpgen.measure import device_problem
from mlpgen.selfcheck import load_module

MODULE = "tuned/mlp_256x512x256_gelu_fp16.py"


def per_call(fn, calls=200, loops=15):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(loops):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return min(times), statistics.median(times)


class Identity(torch.nn.Module):
    def forward(self, x):
        return x


def rows_for(mod, spec, m):
    x, w, b = device_problem(spec, m, "cuda", seed=m)
    fused = build_fused(mod, w, b)
    seq = build_sequential(spec, w, b)
    fused(x)  # plans, compiles and loads
    dev = x.get_device()
    plan = mod._PLANS[(dev, m, False)]
    n = spec.widths[-1]
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    args = mod.launch_args(x, w, b, plan.strategy, y, plan.ws)
    compiled = next(c for k, c in mod._COMPILED.items() if k[0] is plan.kernel)
    meta, func = compiled.packed_metadata, compiled.function
    g0, g1 = plan.grid
    stream = torch._C._cuda_getCurrentRawStream(dev)
    int_args = [a.data_ptr() if isinstance(a, torch.Tensor) else a for a in args]
    device = x.device
    ident = Identity()
    params = mod._join(w, b)
    return [
        ("nn.Sequential (eager)", lambda: seq(x)),
        ("FusedMLP.__call__", lambda: fused(x)),
        ("FusedMLP.forward", lambda: fused.forward(x)),
        ("_lean(x, params)", lambda: mod._lean(x, params)),
        ("mlp()", lambda: mod.mlp(x, w, b)),
        ("_mlp2d()", lambda: mod._mlp2d(x, w, b)),
        ("_forward()", lambda: mod._forward(x, w, b)),
        ("_execute(plan)", lambda: mod._execute(plan, x, w, b)),
        ("_execute(plan, out=y)", lambda: mod._execute(plan, x, w, b, out=y)),
        ("_run(fixed args)", lambda: mod._run(plan.kernel, plan.grid, args, plan.num_warps,
                                              plan.num_stages, mod._CALLER_TENSORS, dev)),
        ("compiled.run(tensors)", lambda: compiled.run(g0, g1, 1, stream, func, meta, None, None,
                                                        None, *args)),
        ("compiled.run(ints)", lambda: compiled.run(g0, g1, 1, stream, func, meta, None, None,
                                                     None, *int_args)),
        ("launch_args()", lambda: mod.launch_args(x, w, b, plan.strategy, y, plan.ws)),
        ("x.new_empty", lambda: x.new_empty((m, n))),
        ("torch.empty(device=)", lambda: torch.empty((m, n), dtype=x.dtype, device=device)),
        ("torch.empty_like(x)", lambda: torch.empty_like(x)),
        ("_check()", lambda: mod._check(x, w, b)),
        ("weights .contiguous()", lambda: [t.contiguous() for t in w]),
        ("x.contiguous()", lambda: x.contiguous()),
        ("is_current_stream_capturing", torch.cuda.is_current_stream_capturing),
        ("torch.compiler.is_compiling", torch.compiler.is_compiling),
        ("torch.is_grad_enabled", torch.is_grad_enabled),
        ("torch.cuda.current_device", torch.cuda.current_device),
        ("x.get_device()", lambda: x.get_device()),
        ("x.data_ptr()", lambda: x.data_ptr()),
        ("x.dtype, x.shape", lambda: (x.dtype, x.shape)),
        ("getCurrentRawStream", lambda: torch._C._cuda_getCurrentRawStream(dev)),
        ("identity nn.Module call", lambda: ident(x)),
        ("python no-op lambda", lambda: None),
    ]


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    mod = load_module(Path(MODULE))
    spec = read_module(Path(MODULE))[0]
    with open(out / "host_profile_probe.log", "w") as log, torch.no_grad():
        for m in (1, 64):
            rows = rows_for(mod, spec, m)
            line = f"M={m} (strategy {mod._PLANS[(0, m, False)].strategy})"
            print(line, flush=True)
            log.write(line + "\n")
            for name, fn in rows:
                lo, med = per_call(fn)
                line = f"  {name:<30} min {lo:6.2f} us  median {med:6.2f} us"
                print(line, flush=True)
                log.write(line + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
