"""Session 8: what is left of a lane call's host time, on the shipped headline module at batch 1
(split) and 1024 (persist) under torch.no_grad(): Triton's launcher object (`compiled.run`)
against its C `launch` called directly (the arguments the launcher's __call__ adds, printed
from its source below), the lane's per-parameter checks against an identity-and-address
comparison with the last checked parameters, and the steps around them. Every direct launch
is checked against the fp32 reference first. Per-call times: loops of 200 calls and one sync,
min and median of 15 loops.
Run from the repository root: python3 docs/h200/s8/launcher_probe.py OUT"""

import inspect
import operator
import statistics
import sys
import time
from pathlib import Path

import torch

from mlpgen.bench import build_fused
from mlpgen.emit import read_module
from mlpgen.measure import device_problem
from mlpgen.selfcheck import load_module
from mlpgen.verify import TOLERANCE, reference, rel_error

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


def probe(mod, spec, m, say):
    """The rows for batch m: (name, call) after checking the direct launch."""
    x, w, b = device_problem(spec, m, "cuda", seed=m)
    fused = build_fused(mod, w, b)
    for _ in range(3):
        fused(x)
    lane = mod._LANES[(0, m)]
    params = mod._join(w, b)
    run = lane.run
    if m == 1:
        say(f"launcher {type(run).__qualname__}; launch {run.launch!r}")
        for name in (
            "launch_cooperative_grid",
            "launch_pdl",
            "global_scratch_size",
            "profile_scratch_size",
            "num_ctas",
        ):
            say(f"  {name} = {getattr(run, name, '<none>')!r}")
        say(inspect.getsource(type(run).__call__))
    strategy = mod._PLANS[(0, m, False)].strategy
    say(f"M={m} (strategy {strategy}, kernel lane: {lane.run is not None})")
    ref = reference(spec, x, w, b)
    stream = torch._C._cuda_getCurrentRawStream(0)
    y = torch.empty_like(lane.like)
    ptrs = [x.data_ptr(), y.data_ptr()] + [p.data_ptr() for p in params]
    head = (lane.g0, lane.g1, 1, stream, lane.function)
    coop = getattr(run, "launch_cooperative_grid", False)
    pdl = getattr(run, "launch_pdl", False)

    def via_run():
        run(*head, lane.meta, None, None, None, *ptrs, *lane.tail)

    def direct():  # the guessed layout of triton 3.6's C launch
        run.launch(*head, coop, pdl, None, None, lane.meta, None, None, None, *ptrs, *lane.tail)

    rows = [
        ("FusedMLP(x)", lambda: fused(x)),
        ("_lean(x, params)", lambda: mod._lean(x, params)),
        ("compiled.run(ints)", via_run),
    ]
    y.fill_(float("nan"))
    try:
        direct()
        torch.cuda.synchronize()
        err = rel_error(y, ref)
        say(f"  direct launch (3.6 guess): rel err {err:.2e}")
        if err <= TOLERANCE[spec.dtype]:
            rows.append(("run.launch(ints) direct", direct))
    except Exception as e:  # a guess of the layout: say what it raised
        say(f"  direct launch (3.6 guess) raised {type(e).__name__}: {e}")
    checked = list(params)
    checked_ptrs = [p.data_ptr() for p in params]

    def per_param():
        for p in params:
            if p.dtype is not torch.float16 or not p.is_contiguous() or p.get_device() != 0:
                return None
        return [p.data_ptr() for p in params]

    def by_identity():
        q = [p.data_ptr() for p in params]
        if q != checked_ptrs or not all(map(operator.is_, params, checked)):
            return None
        return q

    return rows + [
        ("per-param checks + ptrs", per_param),
        ("identity + ptrs compare", by_identity),
        ("[p.data_ptr() for p]", lambda: [p.data_ptr() for p in params]),
        ("torch.empty_like(like)", lambda: torch.empty_like(lane.like)),
        ("torch.compiler.is_compiling", torch.compiler.is_compiling),
        ("_LANES.get((dev, m))", lambda: mod._LANES.get((x.get_device(), m))),
        ("python no-op lambda", lambda: None),
    ]


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    mod = load_module(Path(MODULE))
    spec = read_module(Path(MODULE))[0]
    import triton

    with open(out / "launcher_probe.log", "w") as log, torch.no_grad():

        def say(line):
            print(line, flush=True)
            log.write(line + "\n")

        say(f"triton {triton.__version__}, torch {torch.__version__}")
        for m in (1, 1024):
            for name, fn in probe(mod, spec, m, say):
                lo, med = per_call(fn)
                say(f"  {name:<30} min {lo:6.2f} us  median {med:6.2f} us")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
