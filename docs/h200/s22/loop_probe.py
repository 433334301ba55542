"""Session 22: why chain's calls at the headline's 1024 rows took 9.06 us in the tuner's host
measure and 14.3-14.6 in the bench's (run155, run157), while persist's agreed (8.51 / 8.56).

The two measures differ in three ways: the tuner calls mod.mlp() in loops of 50 calls and keeps
the least of 15 loops; the bench calls FusedMLP (nn.Module) in loops sized to ~14 ms (about
1500 calls here) and keeps the median of 7. For the shipped 1024-row call cell (persist) and its
CUDA-graph cell run as a call cell (chain), outputs checked against the fp32 reference first,
per call (µs), alternating over the cells, medians of ROUNDS rounds:
- loops of N calls through mlp() and through FusedMLP, each then one synchronize: least and
  median loop (N = 50 is the tuner's loop, N = 1500 about the bench's);
- submit: a loop of 1500 calls timed up to the last call's return (the host's cost alone);
- stream: the GPU's time per call over the same loop, CUDA events before and after it (the
  GPU's pace when the host feeds it, launch gaps included; no graph).
Where per call follows stream rather than submit, the loop waits for the GPU.
Run from the repository root: python3 docs/h200/s22/loop_probe.py OUT"""

import statistics
import sys
import time
from pathlib import Path

import torch
from headline_cells import MODULE, ROWS, cells, publish, serve

from mlpgen.bench import build_fused, verdict
from mlpgen.emit import read_module
from mlpgen.selfcheck import load_module
from mlpgen.verify import random_problem, reference

ROUNDS = 5
LOOPS = 15
LONG = 1500


def loops(fn, n: int) -> list[float]:
    """LOOPS loops of n calls, each followed by one synchronize: µs per call of each."""
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(LOOPS):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) / n * 1e6)
    return out


def submit_and_stream(fn) -> tuple[float, float]:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    t0 = time.perf_counter()
    for _ in range(LONG):
        fn()
    t1 = time.perf_counter()
    end.record()
    torch.cuda.synchronize()
    return (t1 - t0) / LONG * 1e6, start.elapsed_time(end) / LONG * 1e3


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(MODULE)[0]
    mod = load_module(MODULE)
    x, w, b = random_problem(spec, ROWS, device="cuda", seed=3)
    fused = build_fused(mod, w, b)
    expected = reference(spec, x, w, b)
    table = cells(mod)
    rows: dict[str, dict[str, list[float]]] = {}
    with torch.no_grad():
        for name, cell in table.items():
            serve(mod, cell)
            for how, fn in (("mlp", lambda: mod.mlp(x, w, b)), ("FusedMLP", lambda: fused(x))):
                status, err = verdict(fn(), expected, spec.dtype)
                print(f"check {name} {cell['kernel']} via {how}: {status} {err:.2e}", flush=True)
                if status != "ok":
                    sys.exit(f"{name} is wrong")
        for _ in range(ROUNDS):
            for name, cell in table.items():
                serve(mod, cell)
                for how, fn in (("mlp", lambda: mod.mlp(x, w, b)), ("FusedMLP", lambda: fused(x))):
                    r = rows.setdefault(f"{name} {how}", {})
                    for n in (50, LONG):
                        t = loops(fn, n)
                        r.setdefault(f"least {n}", []).append(min(t))
                        r.setdefault(f"median {n}", []).append(statistics.median(t))
                    s, g = submit_and_stream(fn)
                    r.setdefault("submit", []).append(s)
                    r.setdefault("stream", []).append(g)
    cols = list(next(iter(rows.values())))
    lines = [f"{'cell, call':22}" + "".join(f"{c:>12}" for c in cols)]
    for name, r in rows.items():
        lines.append(f"{name:22}" + "".join(f"{statistics.median(r[c]):12.2f}" for c in cols))
    publish(out, "loop_probe.txt", lines, table, ROUNDS)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
