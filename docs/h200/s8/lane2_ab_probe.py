"""Session 8: per-call host time of the headline module with the second lane (tuned/, this
commit: parameters checked again only when they change, Triton's C launch called directly where
its launcher is the verified one) against the same tables rendered by the session-7 templates
(.probe/lane1_headline.py, `git show 15b0577:tuned/mlp_256x512x256_gelu_fp16.py`) and eager
nn.Sequential, interleaved in one process: per batch, 7 rounds of (old, new, eager), each a
loop of back-to-back calls of FusedMLP under torch.no_grad() (~15 ms) and one sync; the median
per contender. Outputs are checked against the fp32 reference first.
Run from the repository root: python3 docs/h200/s8/lane2_ab_probe.py OUT"""

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

NEW = Path("tuned/mlp_256x512x256_gelu_fp16.py")
OLD = Path(".probe/lane1_headline.py")
BATCHES = (1, 16, 64, 256, 1024, 4096, 16384)


def loop_us(fn, n):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(NEW)[0]
    new, old = load_module(NEW), load_module(OLD)
    lines = [f"{'batch':>6} {'old':>8} {'new':>8} {'eager':>8} {'new/old':>8} {'eager/new':>9}"]
    print(lines[0], flush=True)
    with torch.no_grad():
        for m in BATCHES:
            x, w, b = device_problem(spec, m, "cuda", seed=m)
            models = {
                "old": build_fused(old, w, b),
                "new": build_fused(new, w, b),
                "eager": build_sequential(spec, w, b),
            }
            ref = reference(spec, x, w, b)
            for name, model in models.items():
                for _ in range(3):
                    y = model(x)
                err = rel_error(y, ref)
                assert err <= TOLERANCE[spec.dtype], (name, m, err)
            lanes = (0, m) in new._LANES
            n = {k: max(20, int(0.015 / (loop_us(lambda: f(x), 20) * 1e-6))) for k, f in models.items()}
            times = {k: [] for k in models}
            for _ in range(7):
                for k, f in models.items():
                    times[k].append(loop_us(lambda: f(x), n[k]))
            med = {k: statistics.median(v) for k, v in times.items()}
            line = (
                f"{m:>6} {med['old']:8.2f} {med['new']:8.2f} {med['eager']:8.2f} "
                f"{med['new'] / med['old']:8.2f} {med['eager'] / med['new']:9.2f}"
                f"  ({new._PLANS[(0, m, False)].strategy}, lane: {lanes})"
            )
            print(line, flush=True)
            lines.append(line)
    (out / "lane2_ab_probe.log").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
