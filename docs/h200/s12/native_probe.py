"""Session 12: the native lane (templates/native_lane.cpp) against the Python lane it takes the
calls of. Per-call host time of the shipped headline module's FusedMLP at batch 1, 64 and 1024,
plain and with out=, each with the native lane on and off (off: the module's _native_state
cleared, so _lean goes on to the Python lane), and eager nn.Sequential, interleaved in one process:
per batch ROUNDS rounds of (python, native, python out=, native out=, eager), each a LOOP_S loop
of back-to-back calls under torch.no_grad() and one sync; medians. Outputs checked against the
fp32 reference first, each contender on a fresh input.
Run from the repository root: python3 docs/h200/s12/native_probe.py OUT [ROUNDS LOOP_S]"""

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
BATCHES = (1, 64, 1024)
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 25
LOOP_S = float(sys.argv[3]) if len(sys.argv) > 3 else 0.006


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
    t0 = time.perf_counter()
    native = mod._native_module()
    lines = [f"native lane: {native.__file__ if native else None} ({time.perf_counter() - t0:.1f} s)"]
    print(lines[0], flush=True)
    names = ("python", "native", "python out=", "native out=", "eager")
    head = f"{'batch':>6} " + " ".join(f"{k:>11}" for k in names) + f" {'nat/py':>7} {'out nat/py':>10} {'eager/nat':>9}"
    lines.append(head)
    print(head, flush=True)
    with torch.no_grad():
        for m in BATCHES:
            x, w, b = device_problem(spec, m, "cuda", seed=m)
            fused, eager = build_fused(mod, w, b), build_sequential(spec, w, b)
            buf = torch.empty((m, spec.widths[-1]), device="cuda", dtype=x.dtype)
            fused(x)  # opens the lane
            state = mod._native_state
            assert state is not None and (0, m) in native.lanes(state), m
            calls = {
                "python": (False, lambda: fused(x)),
                "native": (True, lambda: fused(x)),
                "python out=": (False, lambda: fused(x, out=buf)),
                "native out=": (True, lambda: fused(x, out=buf)),
                "eager": (True, lambda: eager(x)),
            }
            for name, (on, f) in calls.items():
                mod._native_state = state if on else None
                x.copy_(torch.randn_like(x))
                buf.fill_(float("nan"))
                for _ in range(3):
                    y = f()
                err = rel_error(y, reference(spec, x, w, b))
                assert err <= TOLERANCE[spec.dtype], (name, m, err)
            n = {}
            for k, (on, f) in calls.items():
                mod._native_state = state if on else None
                n[k] = max(20, int(LOOP_S / (loop_us(f, 20) * 1e-6)))
            times = {k: [] for k in calls}
            for _ in range(ROUNDS):
                for k, (on, f) in calls.items():
                    mod._native_state = state if on else None
                    times[k].append(loop_us(f, n[k]))
            mod._native_state = state
            med = {k: statistics.median(v) for k, v in times.items()}
            line = (f"{m:>6} " + " ".join(f"{med[k]:11.2f}" for k in names)
                    + f" {med['native'] / med['python']:7.3f} {med['native out='] / med['python out=']:10.3f}"
                    + f" {med['eager'] / med['native']:9.2f}")
            lines.append(line)
            print(line, flush=True)
    (out_dir / "native_probe.log").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
