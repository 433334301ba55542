"""Session 16 probe (leave one stage out): what the fence of the cluster kernel's second barrier
costs. The shipped winners at 1, 16, 64 and 256 rows as rendered, against the same kernels with
`_cluster_sync`'s `barrier.cluster.arrive.release` made `.relaxed` (no MEMBAR.ALL.GPU before the
arrive): a variant for timing only, its remote stores no longer ordered before the owners' reads
(its error against the fp32 reference is printed, not asserted). GPU us per call as the tuner
measures it (measure.gpu_us: CUDA graph of 20 calls), the two alternating, medians of 5 rounds.
Run from the repository root: python3 docs/h200/s16/fence_probe.py OUT"""

import statistics
import sys
from pathlib import Path

from mlpgen.emit import entry, read_module, render
from mlpgen.measure import check, device_problem, gpu_us
from mlpgen.selfcheck import load_module
from mlpgen.spec import KernelConfig

SRC = Path("tuned/mlp_256x512x256_gelu_fp16.py")
CELLS = {  # rows -> the shipped winner there (run122's table)
    1: KernelConfig("cluster", block_m=1, chunk=32, block_k=128, num_warps=4),
    16: KernelConfig("cluster", block_m=1, chunk=32, block_k=128, num_warps=4),
    64: KernelConfig("cluster", block_m=16, chunk=32, block_k=128, num_warps=4),
    256: KernelConfig("cluster", block_m=32, chunk=64, block_k=256, num_warps=4),
}
RELEASE = "barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned; "
RELAXED = "barrier.cluster.arrive.relaxed.aligned; barrier.cluster.wait.acquire.aligned; "


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(SRC)[0]
    configs = list(dict.fromkeys(CELLS.values()))
    text = render(spec, {"test": {i: entry(c) for i, c in enumerate(configs, 1)}}, {})
    assert text.count(RELEASE) == 1
    mods = {}
    for form, src in (("release", text), ("relaxed", text.replace(RELEASE, RELAXED))):
        path = out / f"probe_fence_{form}.py"
        path.write_text(src)
        mods[form] = load_module(path)
    lines = []

    def say(s):
        lines.append(s)
        print(s, flush=True)

    say(f"{'rows':>5} {'kernel':>26} {'release':>8} {'relaxed':>8} {'saved':>6}  relaxed err")
    for m, c in CELLS.items():
        i = configs.index(c) + 1
        x, w, b = device_problem(spec, m, "cuda", 0)
        fns, errs = {}, {}
        for form, mod in mods.items():
            cell = mod.TUNED["test"][i]

            def run(x, w, b, out=None, cell=cell, mod=mod):
                return mod._launch(x, w, b, cell, out=out)
            errs[form] = check(run, spec, m, "cuda", 1)
            fns[form] = lambda cell=cell, mod=mod: mod._launch(x, w, b, cell)
        assert not errs["release"][1], errs["release"]
        t = {f: [] for f in fns}
        for _ in range(5):
            for f, fn in fns.items():
                t[f].append(gpu_us(fn))
        rel, lax = (statistics.median(t[f]) for f in ("release", "relaxed"))
        say(f"{m:>5} {c.kernel_name:>26} {rel:8.2f} {lax:8.2f} {rel - lax:6.2f}  "
            f"{errs['relaxed'][0]:.2e} {errs['relaxed'][1]}")
    (out / "fence.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
