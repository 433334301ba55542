"""Session 9 probe, after run57 (split_parts_probe.py: the arrival counter's acq_rel atomic took
1.19 us of the batch-1 split kernel's 4.61): does a release-only arrival, with an acquire
atomic on the counter in the last program only (still a correct hand-over: the acquire reads
the end of every program's release sequence), cost less? Variants of the shipped 1-row kernel
as in split_parts_probe.py: full and no_last as shipped, and both with the release arrival
(full_rel checked against the fp32 reference at 1, 64 and 37 rows, 30 launches each).
GPU time per call, CUDA graph of 20 calls, medians of 5 alternating rounds.
Run from the repository root: python3 docs/h200/s9/split_sync_probe.py OUT"""

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from split_parts_probe import H200, KERNEL, SRC, variants  # noqa: E402

from mlpgen.emit import read_module  # noqa: E402
from mlpgen.measure import check, device_problem, gpu_us  # noqa: E402
from mlpgen.selfcheck import load_module  # noqa: E402

ACQ_REL = 'sem="acq_rel") == 15:\n'
RELEASE = 'sem="release") == 15:\n        tl.atomic_add(count_ptr + pid_m, 0, sem="acquire")\n'


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(SRC)[0]
    base = variants(SRC.read_text())
    srcs = {"full": base["full"], "no_last": base["no_last"]}
    for k in ("full", "no_last"):
        assert ACQ_REL in srcs[k]
        srcs[k + "_rel"] = srcs[k].replace(ACQ_REL, RELEASE)
    mods = {}
    for name, src in srcs.items():
        path = out / f"split_{name}.py"
        path.write_text(src)
        mods[name] = load_module(path)
    cell = mods["full"].TUNED[H200][1]
    assert cell["kernel"] == KERNEL
    for name in ("full", "full_rel"):
        run = lambda x, w, b, out=None, mod=mods[name]: mod._launch(x, w, b, cell, out=out)  # noqa: E731
        for m in (1, 64, 37):
            for seed in range(30):
                err, why = check(run, spec, m, "cuda", seed)
                assert not why, (name, m, seed, why)
    lines = [f"{'rows':>5} " + " ".join(f"{k:>11}" for k in mods)]
    print(lines[0], flush=True)
    for m in (1, 64):
        x, w, b = device_problem(spec, m, "cuda", 2)
        times = {k: [] for k in mods}
        for _ in range(5):
            for k, mod in mods.items():
                times[k].append(gpu_us(lambda mod=mod: mod._launch(x, w, b, cell)))
        med = {k: statistics.median(v) for k, v in times.items()}
        lines.append(f"{m:>5} " + " ".join(f"{med[k]:11.2f}" for k in mods))
        print(lines[-1], flush=True)
    (out / "split_sync_probe.log").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
