"""Session 14 probe: does a cluster launch cost the host more than a plain one? run105's re-tune
made cluster the headline's call winner at 1-64 rows (GPU 4.16-4.56 us against split's
4.43-5.61), and its bench then measured 10.4 / 10.2 / 6.85 us per call at 1 / 16 / 64 rows
where run103's (split) had 6.34 / 6.30 / 7.09; the tuner's host times of both strategies spread
from 6.3 to 9.6 us in one bucket. Here two modules of the headline, one whose cells at 1, 16 and
64 rows are split (the earlier winner), one whose are cluster, with the same weights, called
alternately in one process: per-call time (a loop of 200 `FusedMLP(x)` calls without grad, one
synchronize; both through the native lane), medians of 9 rounds; GPU time as the tuner measures
it (measure.gpu_us); one call captured in a CUDA graph and replayed 200 times, eager's too.
Run from the repository root: python3 docs/h200/s14/call_cluster_probe.py OUT"""

import statistics
import sys
import time
from pathlib import Path

import torch

from mlpgen.emit import entry, read_module, render
from mlpgen.measure import gpu_us
from mlpgen.selfcheck import load_module
from mlpgen.spec import KernelConfig
from mlpgen.verify import reference, rel_error

SRC = Path("tuned/mlp_256x512x256_gelu_fp16.py")
H200 = "NVIDIA H200|sm90|132"
CONFIGS = {
    "split": KernelConfig("split", block_m=16, chunk=32, block_n=256, block_k=128, num_warps=4),
    "cluster": KernelConfig("cluster", block_m=16, chunk=32, block_k=128, num_warps=4),
}
ROWS = (1, 16, 64)


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


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(SRC)[0]
    mods = {}
    for name, cfg in CONFIGS.items():
        path = out / f"probe_{name}.py"
        path.write_text(render(spec, {H200: {m: entry(cfg) for m in ROWS}}, {}))
        mods[name] = load_module(path)
    lines = []

    def say(s):
        lines.append(s)
        print(s, flush=True)

    torch.manual_seed(0)
    fused = {n: m.FusedMLP().cuda() for n, m in mods.items()}
    with torch.no_grad():
        for p, q in zip(fused["cluster"].parameters(), fused["split"].parameters()):
            p.copy_(q)
    w = [lin.weight.detach() for lin in fused["split"].linears]
    b = [lin.bias.detach() for lin in fused["split"].linears]

    def eager(x):
        return torch.nn.functional.linear(torch.nn.functional.gelu(
            torch.nn.functional.linear(x, w[0], b[0])), w[1], b[1])

    say(f"{'rows':>5} {'what':>8} {'split':>8} {'cluster':>8} {'eager':>8}  (us, medians of 9)")
    with torch.no_grad():
        for m in ROWS:
            x = torch.randn(m, 256, device="cuda", dtype=torch.float16)
            for n, f in fused.items():
                err = rel_error(f(x), reference(spec, x, w, b))
                assert err < 1e-2, (n, m, err)
            lanes = {n: mods[n]._native_state is not None and
                     mods[n]._native_module().lanes(mods[n]._native_state) for n in mods}
            fns = {n: (lambda f=f: f(x)) for n, f in fused.items()}
            fns["eager"] = lambda: eager(x)
            t = {k: {"call": [], "gpu": [], "graph": []} for k in fns}
            for _ in range(9):
                for k, fn in fns.items():
                    t[k]["call"].append(per_call(fn))
            for _ in range(5):
                for k, fn in fns.items():
                    t[k]["gpu"].append(gpu_us(fn))
                    t[k]["graph"].append(replay(fn))
            for what in ("call", "gpu", "graph"):
                say(f"{m:>5} {what:>8} " + " ".join(
                    f"{statistics.median(t[k][what]):8.2f}" for k in ("split", "cluster", "eager")))
            say(f"      native lanes: {lanes}; call rounds split {min(t['split']['call']):.2f}-"
                f"{max(t['split']['call']):.2f}, cluster {min(t['cluster']['call']):.2f}-"
                f"{max(t['cluster']['call']):.2f}")
    (out / "call_cluster.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
