"""Session 10: FusedMLP.__call__ calling forward itself where nn.Module.__call__ would only call
it (no hooks, no tracing, no module.compile(), not compiling). Per-call host time of the headline
module rendered before the change (old: `git show e4db7ad:tuned/mlp_256x512x256_gelu_fp16.py`,
carried as .probe/call_old.py) and after it (new: tuned/), plain calls and calls with out=, and
eager nn.Sequential, interleaved in one process: per batch rounds of (old, new, old out=, new
out=, eager), each a ~15 ms loop of back-to-back calls under torch.no_grad() and one sync
(ROUNDS rounds of LOOP_S loops: 7 of 15 ms in run69, 25 of 6 ms in run70);
medians. Outputs checked against the fp32 reference first.
Run from the repository root: python3 docs/h200/s10/call_probe.py OUT [ROUNDS LOOP_S]"""

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
OLD = Path(".probe/call_old.py")
BATCHES = (1, 64, 1024)
ROUNDS, LOOP_S = int(sys.argv[2]) if len(sys.argv) > 2 else 7, float(sys.argv[3]) if len(sys.argv) > 3 else 0.015


def loop_us(fn, n):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def main(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    spec = read_module(NEW)[0]
    new, old = load_module(NEW), load_module(OLD)
    assert hasattr(new.FusedMLP, "__call__") and "__call__" in new.FusedMLP.__dict__
    assert "__call__" not in old.FusedMLP.__dict__
    names = ("old", "new", "old out=", "new out=", "eager")
    head = f"{'batch':>6} " + " ".join(f"{k:>9}" for k in names) + f" {'new/old':>8} {'out new/old':>11}"
    lines = [head]
    print(head, flush=True)
    with torch.no_grad():
        for m in BATCHES:
            x, w, b = device_problem(spec, m, "cuda", seed=m)
            f_old, f_new, eager = build_fused(old, w, b), build_fused(new, w, b), build_sequential(spec, w, b)
            buf = torch.empty((m, spec.widths[-1]), device="cuda", dtype=x.dtype)
            calls = {
                "old": lambda: f_old(x),
                "new": lambda: f_new(x),
                "old out=": lambda: f_old(x, out=buf),
                "new out=": lambda: f_new(x, out=buf),
                "eager": lambda: eager(x),
            }
            ref = reference(spec, x, w, b)
            for name, f in calls.items():
                buf.fill_(float("nan"))
                for _ in range(3):
                    y = f()
                assert rel_error(y, ref) <= TOLERANCE[spec.dtype], (name, m)
            n = {k: max(20, int(LOOP_S / (loop_us(f, 20) * 1e-6))) for k, f in calls.items()}
            times = {k: [] for k in calls}
            for _ in range(ROUNDS):
                for k, f in calls.items():
                    times[k].append(loop_us(f, n[k]))
            med = {k: statistics.median(v) for k, v in times.items()}
            line = (f"{m:>6} " + " ".join(f"{med[k]:9.2f}" for k in names)
                    + f" {med['new'] / med['old']:8.3f} {med['new out='] / med['old out=']:11.3f}")
            lines.append(line)
            print(line, flush=True)
    (out_dir / "call_probe.log").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
