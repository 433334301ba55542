"""Session 9: per-call host time of the headline module called with out= (its output tensor
given, so the call allocates nothing) against the same module called plainly and eager
nn.Sequential, interleaved in one process: per batch, 7 rounds of (plain, out=, eager), each a
loop of back-to-back calls under torch.no_grad() (~15 ms) and one sync; the median per
contender. Outputs are checked against the fp32 reference first (out= on a NaN-filled buffer).
Run from the repository root: python3 docs/h200/s9/out_probe.py OUT"""

import statistics
import sys
import time
from pathlib import Path

import torch

from mlpgen.bench import build_fused, build_sequential
from mlpgen.emit import read_module
from mlpgen.measure import device_problem
from mlpgen.selfcheck import load_module
from mlpgen.verify import TOLERANCE, reference, rel_error

PATH = Path("tuned/mlp_256x512x256_gelu_fp16.py")
BATCHES = (1, 16, 64, 256, 1024, 4096)


def loop_us(fn, n):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def main(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    spec = read_module(PATH)[0]
    mod = load_module(PATH)
    head = f"{'batch':>6} {'plain':>8} {'out=':>8} {'eager':>8} {'out/plain':>9} {'eager/out':>9}"
    lines = [head]
    print(head, flush=True)
    with torch.no_grad():
        for m in BATCHES:
            x, w, b = device_problem(spec, m, "cuda", seed=m)
            fused, eager = build_fused(mod, w, b), build_sequential(spec, w, b)
            buf = torch.full((m, spec.widths[-1]), float("nan"), device="cuda", dtype=x.dtype)
            calls = {
                "plain": lambda: fused(x),
                "out=": lambda: fused(x, out=buf),
                "eager": lambda: eager(x),
            }
            ref = reference(spec, x, w, b)
            for name, f in calls.items():
                for _ in range(3):
                    y = f()
                assert (y is buf) == (name == "out="), name
                err = rel_error(y, ref)
                assert err <= TOLERANCE[spec.dtype], (name, m, err)
            n = {k: max(20, int(0.015 / (loop_us(f, 20) * 1e-6))) for k, f in calls.items()}
            times = {k: [] for k in calls}
            for _ in range(7):
                for k, f in calls.items():
                    times[k].append(loop_us(f, n[k]))
            med = {k: statistics.median(v) for k, v in times.items()}
            line = (
                f"{m:>6} {med['plain']:8.2f} {med['out=']:8.2f} {med['eager']:8.2f} "
                f"{med['out='] / med['plain']:9.2f} {med['eager'] / med['out=']:9.2f}"
                f"  ({mod._PLANS[(0, m, False)].strategy}, lane: {(0, m) in mod._LANES})"
            )
            print(line, flush=True)
            lines.append(line)
    (out_dir / "out_probe.log").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
