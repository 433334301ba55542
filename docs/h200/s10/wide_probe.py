"""Session 10: run65's re-tune of 1024,4096,1024 gelu_tanh bf16 picked cuBLASLt's epilogue at
1024 rows on host time (39.8 us against eager's 52.5, the tuner's least of 15 loops), and that
run's bench measured the module's call there at 74.1 us against eager's 64.4 (medians). Here,
interleaved in one process: the re-tuned module (new: epilogue at 1024), the previous one (old:
the torch path there) and eager nn.Sequential with the same weights, FusedMLP calls under
torch.no_grad(); per batch 7 rounds of (new, old, eager), each a ~15 ms loop of back-to-back calls
and one sync; medians; plus GPU time (measure.gpu_us: CUDA graph of 20 calls). Outputs checked
against the fp32 reference first. The old module is `git show 7cfff38:tuned/<name>.py`, carried
as .probe/wide_old.py. Run from the repository root: python3 docs/h200/s10/wide_probe.py OUT"""

import statistics
import sys
import time
from pathlib import Path

import torch

from mlpgen.bench import build_fused, build_sequential
from mlpgen.emit import read_module
from mlpgen.measure import device_problem, gpu_us
from mlpgen.selfcheck import load_module
from mlpgen.verify import TOLERANCE, reference, rel_error

NEW = Path("tuned/mlp_1024x4096x1024_gelu_tanh_bf16.py")
OLD = Path(".probe/wide_old.py")
BATCHES = (64, 1024)


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
    head = (f"{'batch':>6} {'new':>8} {'old':>8} {'eager':>8} {'eager/new':>9} {'eager/old':>9}"
            f" {'gpu new':>8} {'gpu old':>8} {'gpu eager':>9}")
    lines = [head]
    print(head, flush=True)
    with torch.no_grad():
        for m in BATCHES:
            x, w, b = device_problem(spec, m, "cuda", seed=m)
            calls = {
                "new": build_fused(new, w, b),
                "old": build_fused(old, w, b),
                "eager": build_sequential(spec, w, b),
            }
            ref = reference(spec, x, w, b)
            for name, f in calls.items():
                for _ in range(3):
                    y = f(x)
                err = rel_error(y, ref)
                assert err <= TOLERANCE[spec.dtype], (name, m, err)
            n = {k: max(20, int(0.015 / (loop_us(lambda f=f: f(x), 20) * 1e-6)))
                 for k, f in calls.items()}
            times = {k: [] for k in calls}
            for _ in range(7):
                for k, f in calls.items():
                    times[k].append(loop_us(lambda f=f: f(x), n[k]))
            med = {k: statistics.median(v) for k, v in times.items()}
            gpu = {k: gpu_us(lambda f=f: f(x)) for k, f in calls.items()}
            line = (f"{m:>6} {med['new']:8.2f} {med['old']:8.2f} {med['eager']:8.2f}"
                    f" {med['eager'] / med['new']:9.2f} {med['eager'] / med['old']:9.2f}"
                    f" {gpu['new']:8.2f} {gpu['old']:8.2f} {gpu['eager']:9.2f}")
            lines.append(line)
            print(line, flush=True)
    (out_dir / "wide_probe.log").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
