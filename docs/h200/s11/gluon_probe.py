"""Session 11 probe: the warp-specialised Gluon kernel of gluon_mlp.py against the shipped
headline module's large-batch kernels and eager, on the H200. First each config is checked
against the fp32 reference (measure.check: NaN-poisoned output, fresh inputs) at CHECK_ROWS,
each in its own process (`gluon_probe.py check I`: a kernel that hangs costs one timeout);
then GPU us per call (measure.gpu_us: CUDA graph of 20 calls, do_bench median) at 16384,
65536 and 262144 rows of those that passed, all contenders alternating, 3 rounds, medians
(`gluon_probe.py time OUT I J ...`); `part OUT I ...` times configs with the kernel cut back
(GLUON_MLP_PART). From the repository root, as in docs/h200/s11/run75.sh-run80.sh."""

import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).parent))
from gluon_mlp import GluonMLP, smem_bytes  # noqa: E402

from mlpgen.emit import read_module  # noqa: E402
from mlpgen.measure import check, device_problem, gpu_us  # noqa: E402
from mlpgen.selfcheck import load_module  # noqa: E402

SRC = Path("tuned/mlp_256x512x256_gelu_fp16.py")
H200 = "NVIDIA H200|sm90|132"
LOG = []


def say(line=""):
    print(line, flush=True)
    LOG.append(line)


def eager(x, w, b, out=None):
    y = F.linear(F.gelu(F.linear(x, w[0], b[0])), w[1], b[1])
    if out is not None:
        out.copy_(y)
        return out
    return y


def contenders(mod, good, x, w, b, cell):
    """eager, the shipped module's kernel for this bucket, each Gluon config: callables."""
    return [lambda: eager(x, w, b), lambda: mod._launch(x, w, b, cell)] + [
        lambda r=r: r(x, w, b) for r in good
    ]


CONFIGS = [  # (bn1, stages, consumer regs, loader regs, ping-pong): no spills for sm_90a
    (64, 2, 240, 24, 0),  # 0-3: run75
    (32, 3, 240, 24, 0),
    (32, 4, 240, 24, 0),
    (32, 2, 240, 24, 0),
    (64, 2, 240, 24, 1),  # 4-5 (and 0): run76
    (32, 3, 240, 24, 1),
    (32, 4, 240, 24, 1),  # 6: run79 (with 1, 2, 5; GLUON_MLP_XREG=1)
]
CHECK_ROWS = (128, 1, 37, 1000, 16389, 262144)


def check_config(index: int) -> bool:
    """One config against the fp32 reference; run in its own process (a hang costs only it)."""
    spec = read_module(SRC)[0]
    run = GluonMLP(*CONFIGS[index])
    t0 = time.perf_counter()
    try:
        res = [check(run, spec, m, "cuda", seed) for seed, m in enumerate(CHECK_ROWS)]
        whys = [w for _, w in res if w]
        errs = [f"{e:.1e}" for e, _ in res]
    except Exception as e:  # noqa: BLE001
        whys, errs = [f"{type(e).__name__}: {str(e)[:300]}"], []
    cfg = CONFIGS[index]
    say(f"{run.name()} smem {smem_bytes(64, cfg[0], 256, 256, cfg[1])} rows {CHECK_ROWS}: "
        + ("ok " + " ".join(errs) if not whys else "FAIL " + whys[0])
        + f" ({time.perf_counter() - t0:.1f} s)")
    return not whys


def time_configs(out: Path, indices) -> None:
    spec = read_module(SRC)[0]
    mod = load_module(SRC)
    ship = mod.TUNED[H200]
    good = [GluonMLP(*CONFIGS[i]) for i in indices]
    say(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    e_errs = [f"{check(eager, spec, m, 'cuda', 7)[0]:.1e}" for m in (1000, 16389)]
    say(f"eager's own relative error at 1000, 16389 rows: {' '.join(e_errs)}")
    say("GPU us per call (CUDA graph of 20 calls, do_bench median), medians of 3 rounds")
    names = ["eager", "shipped"] + [r.name() for r in good]
    say(f"{'rows':>7} " + " ".join(f"{n:>24}" for n in names) + "   best gluon / shipped")
    for m in (16384, 65536, 262144):
        x, w, b = device_problem(spec, m, "cuda", 3)
        cell = ship[m]
        fns = contenders(mod, good, x, w, b, cell)
        times = [[] for _ in fns]
        for _ in range(3):
            for i, fn in enumerate(fns):
                times[i].append(gpu_us(fn))
        med = [statistics.median(t) for t in times]
        ratio = min(med[2:]) / med[1] if good else float("nan")
        say(f"{m:>7} " + " ".join(f"{v:>24.2f}" for v in med) + f"   {ratio:.3f}"
            + f"  (shipped: {cell['strategy']} {cell.get('block_m')}x{cell.get('block_n')})")
    out.mkdir(parents=True, exist_ok=True)
    (out / "gluon_time.log").write_text("\n".join(LOG) + "\n")


def time_part(out: Path, indices) -> None:
    """GPU us of configs `indices` at 16384 and 262144 rows with the GLUON_MLP_PART this process
    was started with (the kernel cut back: gluon_mlp._PART), beside the shipped kernel."""
    import os

    spec = read_module(SRC)[0]
    mod = load_module(SRC)
    part = os.environ.get("GLUON_MLP_PART", "0")
    runs = [GluonMLP(*CONFIGS[i]) for i in indices]
    for m in (16384, 262144):
        x, w, b = device_problem(spec, m, "cuda", 3)
        fns = contenders(mod, runs, x, w, b, mod.TUNED[H200][m])[1:]
        times = [[] for _ in fns]
        for _ in range(3):
            for i, fn in enumerate(fns):
                times[i].append(gpu_us(fn))
        med = [statistics.median(t) for t in times]
        say(f"part {part} rows {m:>7}: shipped {med[0]:8.2f}  "
            + "  ".join(f"{r.name()} {t:8.2f}" for r, t in zip(runs, med[1:])))
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "gluon_parts.log", "a") as f:
        f.write("\n".join(LOG) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "part":
        time_part(Path(sys.argv[2]), [int(a) for a in sys.argv[3:]] or [0, 4])
        sys.exit(0)
    if sys.argv[1] == "check":
        sys.exit(0 if check_config(int(sys.argv[2])) else 1)
    time_configs(Path(sys.argv[2]), [int(a) for a in sys.argv[3:]])
