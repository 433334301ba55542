"""Session 15 probe: the cluster strategy with one-row tiles on the CUDA cores (block_m 1,
ClusterPlan.fma: each dot a product with the weight tile summed over k in the weights' load
layout, one cluster per row) against the shipped 16-row cluster tile (tl.dot, a row block
padded to 16 rows). Every config is checked first (NaN-poisoned output, fp32 reference, at 1, 3
and 17 rows, 3 seeds); then GPU us per call as the tuner measures it (measure.gpu_us: CUDA
graph of 20 calls), the configs alternating, medians of 5 rounds, at 1, 4, 16 and 64 rows; and
one call captured in a CUDA graph and replayed 200 times (per replay), eager's three kernels
too, medians of 5 rounds.
With FMA_PROBE=rows (run116) the contenders are the row-by-row form of 1, 2, 4 and 8 rows a
cluster (templates/cluster_rows.j2) with k steps of 128 and 256; run111 and run114 timed the
first one-row form (commit a5b0759), whose FMA list is the default here.
Run from the repository root: python3 docs/h200/s15/fma_probe.py OUT"""

import os
import statistics
import sys
import time
from pathlib import Path

import torch

from mlpgen.emit import entry, read_module, render
from mlpgen.measure import check, device_problem, gpu_us
from mlpgen.selfcheck import load_module
from mlpgen.spec import KernelConfig

SRC = Path("tuned/mlp_256x512x256_gelu_fp16.py")
SHIPPED = KernelConfig("cluster", block_m=16, chunk=32, block_k=128, num_warps=4)
FMA = [
    KernelConfig("cluster", block_m=m, chunk=c, block_k=k, num_warps=w)
    for m, c, k, w in [(1, 32, 128, 4), (1, 32, 256, 4), (1, 32, 128, 2), (1, 32, 256, 2),
                       (1, 64, 128, 4), (1, 64, 256, 4), (1, 64, 128, 2)]
]
if os.environ.get("FMA_PROBE") == "rows":  # run116: the row-by-row form, 1-8 rows a cluster
    FMA = [
        KernelConfig("cluster", block_m=m, chunk=32, block_k=k, num_warps=4)
        for m in (1, 2, 4, 8) for k in (128, 256)
    ]
ROWS = (1, 4, 16, 64)


def per_call(fn, calls=200):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def replay(fn, reps=200):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return per_call(g.replay, reps)


def label(c):
    return f"m{c.block_m}c{c.chunk}k{c.block_k}w{c.num_warps}"


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(SRC)[0]
    configs = [SHIPPED, *FMA]
    path = out / "probe_fma.py"
    path.write_text(render(spec, {"test": {i: entry(c) for i, c in enumerate(configs, 1)}}, {}))
    mod = load_module(path)
    cells = {label(c): mod.TUNED["test"][i] for i, c in enumerate(configs, 1)}
    lines = []

    def say(s):
        lines.append(s)
        print(s, flush=True)

    for name, cell in cells.items():
        def run(x, w, b, out=None, cell=cell):
            return mod._launch(x, w, b, cell, out=out)
        for m in (1, 3, 17):
            for seed in range(3):
                err, why = check(run, spec, m, "cuda", seed)
                assert not why, (name, m, why)
        say(f"checked {name}: ok")
    names = list(cells)
    say(f"{'rows':>5} {'what':>6} " + " ".join(f"{n:>13}" for n in names) + f" {'eager':>8}")
    for m in ROWS:
        x, w, b = device_problem(spec, m, "cuda", 0)
        y = torch.empty(m, spec.widths[-1], device="cuda", dtype=x.dtype)

        def eager():
            return torch.nn.functional.linear(torch.nn.functional.gelu(
                torch.nn.functional.linear(x, w[0], b[0])), w[1], b[1])
        fns = {n: (lambda c=c: mod._launch(x, w, b, c, out=y)) for n, c in cells.items()}
        fns["eager"] = eager
        t = {k: {"gpu": [], "graph": []} for k in fns}
        for _ in range(5):
            for k, fn in fns.items():
                t[k]["gpu"].append(gpu_us(fn))
                t[k]["graph"].append(replay(fn))
        for what in ("gpu", "graph"):
            say(f"{m:>5} {what:>6} " + " ".join(
                f"{statistics.median(t[k][what]):13.2f}" for k in names)
                + f" {statistics.median(t['eager'][what]):8.2f}")
    (out / "fma.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
