"""Session 16 probe: cluster tiles of 32-128 rows (the hidden split over a thread-block
cluster, tl.dot tiles, partial outputs handed over through distributed shared memory) at
64-1024 rows, where row blocks of 16 read the weights from L2 once per 16 rows. Their receive
buffers (block_m x 256 x 4 bytes: 64 KiB at 64 rows) pass the 48 KiB a launch gets without
opting in: the module now opts in (_opt_in_shared). Against the headline's shipped winners at
those rows (cluster 16 rows at 256, persist for calls and chain under graphs at 1024) and
eager. Every config is checked first (NaN-poisoned output, fp32 reference) at 3, 17, 100 and
1000 rows, 2 seeds; then GPU us per call as the tuner measures it (measure.gpu_us: CUDA graph
of 20 calls), the configs alternating, medians of 5 rounds, and one call captured in a CUDA
graph replayed 200 times (per replay).
Run from the repository root: python3 docs/h200/s16/tall_cluster_probe.py OUT"""

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
SHIPPED = [
    KernelConfig("cluster", block_m=16, chunk=32, block_k=256, num_warps=4),  # 64 rows
    KernelConfig("cluster", block_m=16, chunk=32, block_k=256, num_warps=2),  # 256 rows
    KernelConfig("persist", block_m=64, block_n=64, block_k=64, num_warps=4, num_stages=3),
    KernelConfig("chain", block_m=64, block_n=32, block_k=64, num_warps=4, num_stages=3),
]
TALL = [
    KernelConfig("cluster", block_m=m, chunk=c, block_k=k, num_warps=w)
    for m, c, k, w in [(32, 32, 128, 4), (32, 32, 256, 4), (32, 64, 128, 4), (32, 64, 128, 8),
                       (64, 32, 128, 8), (64, 32, 256, 8), (64, 64, 128, 8), (64, 64, 256, 8),
                       (64, 128, 128, 8), (128, 32, 128, 8)]
]
ROWS = (64, 256, 1024)


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
    if c.strategy == "cluster":
        return f"cl{c.block_m}c{c.chunk}k{c.block_k}w{c.num_warps}"
    return f"{c.strategy[:5]}{c.block_m}n{c.block_n}"


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(SRC)[0]
    configs = [*SHIPPED, *TALL]
    path = out / "probe_tall.py"
    path.write_text(render(spec, {"test": {i: entry(c) for i, c in enumerate(configs, 1)}}, {}))
    mod = load_module(path)
    cells = {}
    lines = []

    def say(s):
        lines.append(s)
        print(s, flush=True)

    for i, c in enumerate(configs, 1):
        cell = mod.TUNED["test"][i]

        def run(x, w, b, out=None, cell=cell):
            return mod._launch(x, w, b, cell, out=out)
        try:
            for m in (3, 17, 100, 1000):
                for seed in range(2):
                    err, why = check(run, spec, m, "cuda", seed)
                    assert not why, (m, why)
        except Exception as e:  # a config that fails is reported, the others still timed
            say(f"FAILED {label(c)}: {str(e)[:200]}")
            continue
        cells[label(c)] = cell
        say(f"checked {label(c)}: ok")
    names = list(cells)
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
        say(f"{m} rows: {'config':>14} {'gpu':>7} {'graph':>7} {'graph/eager':>11}")
        eg = statistics.median(t["eager"]["graph"])
        for k in [*names, "eager"]:
            g, r = (statistics.median(t[k][w]) for w in ("gpu", "graph"))
            say(f"{'':>10}{k:>14} {g:7.2f} {r:7.2f} {r / eg:11.2f}")
    (out / "tall.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
