"""Session 12: is a loop of native-lane calls host-bound or GPU-bound? For the shipped headline's
FusedMLP at each small batch: the per-call time of a loop of back-to-back calls (one sync; median
of ROUNDS loops of ~6 ms, interleaved with eager), and, from torch.profiler's CUDA trace of one
loop of 200 calls, the mean kernel duration and the mean start-to-start interval of the call's
kernel (interval ~ duration: the GPU is the limit; interval > duration: the host is).
Run from the repository root: python3 docs/h200/s12/loop_probe.py OUT [ROUNDS]"""

import statistics
import sys
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from mlpgen.bench import build_fused, build_sequential
from mlpgen.emit import read_module
from mlpgen.measure import device_problem
from mlpgen.selfcheck import load_module
from mlpgen.verify import TOLERANCE, reference, rel_error

PATH = Path("tuned/mlp_256x512x256_gelu_fp16.py")
BATCHES = (1, 16, 64, 256, 1024)
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 15


def loop_us(fn, n):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def trace(fn, n=200):
    """(mean kernel duration, mean start-to-start interval) of the kernels of n calls, us."""
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
    events = sorted(
        (e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
        key=lambda e: e.time_range.start,
    )
    names = {e.name for e in events}
    starts = [e.time_range.start for e in events]
    durs = [e.time_range.end - e.time_range.start for e in events]
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    return statistics.mean(durs), statistics.median(gaps), len(events), sorted(names)


def main(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    spec = read_module(PATH)[0]
    mod = load_module(PATH)
    head = f"{'batch':>6} {'native':>8} {'eager':>8} {'ratio':>6} {'kernel':>8} {'interval':>9}  kernels"
    lines = [head]
    print(head, flush=True)
    with torch.no_grad():
        for m in BATCHES:
            x, w, b = device_problem(spec, m, "cuda", seed=m)
            fused, eager = build_fused(mod, w, b), build_sequential(spec, w, b)
            y = fused(x)
            y = fused(x)
            assert rel_error(y, reference(spec, x, w, b)) <= TOLERANCE[spec.dtype]
            assert (0, m) in mod._native_module().lanes(mod._native_state), m
            calls = {"native": lambda: fused(x), "eager": lambda: eager(x)}
            n = {k: max(20, int(0.006 / (loop_us(f, 20) * 1e-6))) for k, f in calls.items()}
            times = {k: [] for k in calls}
            for _ in range(ROUNDS):
                for k, f in calls.items():
                    times[k].append(loop_us(f, n[k]))
            med = {k: statistics.median(v) for k, v in times.items()}
            dur, gap, count, names = trace(calls["native"])
            line = (f"{m:>6} {med['native']:8.2f} {med['eager']:8.2f} {med['eager'] / med['native']:6.2f}"
                    f" {dur:8.2f} {gap:9.2f}  {count} x {','.join(names)}")
            lines.append(line)
            print(line, flush=True)
    (out_dir / "loop_probe.log").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
