"""Session 11 probe: chain's kernels after the first loading their whole weight tile and bias
before they wait for the previous layer (the template change in chain_preload.patch beside this
file, layout.chain_preloads; measured slower in run82 and not kept: `git apply
docs/h200/s11/chain_preload.patch` and re-render tuned/ to run this again) against the same
configs as shipped (every load after the wait), in one process. Modules: tuned/ (new) and
.probe/chain_old.py (`git show HEAD:tuned/mlp_256x512x256_gelu_fp16.py`, before the change). Every config verified against the fp32 reference at the bucket's rows and 7 more in
both; then GPU us per call (measure.gpu_us: CUDA graph of 20 calls), old and new alternating,
medians of 5 rounds. Run from the repository root: python3 docs/h200/s11/chain_preload_probe.py"""

import statistics
import sys
from pathlib import Path

from mlpgen.emit import entry, read_module
from mlpgen.layout import plan_tiles
from mlpgen.measure import check, device_problem, gpu_us
from mlpgen.selfcheck import load_module
from mlpgen.spec import KernelConfig

SRC = Path("tuned/mlp_256x512x256_gelu_fp16.py")


def chain(m, n, k, w):
    return KernelConfig("chain", block_m=m, block_n=n, block_k=k, num_warps=w, num_stages=3)


CASES = [  # (rows, config): the shipped CUDA-graph winners from 1 to 1024 rows (the modules hold
    # only their winners' kernels)
    (1024, chain(64, 32, 64, 4)),
    (256, chain(64, 32, 64, 4)),
    (64, chain(16, 16, 128, 2)),
    (16, chain(16, 16, 128, 4)),
    (1, chain(16, 16, 128, 4)),
]


def main():
    spec = read_module(SRC)[0]
    new, old = load_module(SRC), load_module(Path(".probe/chain_old.py"))
    print(f"{'rows':>5} {'config':24} {'preload':>7} {'old':>7} {'new':>7} {'new/old':>7}")
    for m, cfg in CASES:
        pre = any(t.preload for t in plan_tiles(spec, cfg))
        cell = entry(cfg)
        fns, bad = {}, ""
        for tag, mod in (("old", old), ("new", new)):
            run = lambda x, w, b, out=None, mod=mod, c=cell: mod._launch(x, w, b, c, out=out)  # noqa: E731
            for mm in (m, m + 7):
                why = check(run, spec, mm, "cuda", 1)[1]
                if why:
                    bad += f" {tag} at {mm}: {why}"
            x, w, b = device_problem(spec, m, "cuda", 2)
            fns[tag] = lambda mod=mod, x=x, w=w, b=b, c=cell: mod._launch(x, w, b, c)
        if bad:
            print(f"{m:5d} {cfg.kernel_name:24} WRONG{bad}", flush=True)
            continue
        t = {"old": [], "new": []}
        for _ in range(5):
            for tag in ("old", "new"):
                t[tag].append(gpu_us(fns[tag]))
        g = {k: statistics.median(v) for k, v in t.items()}
        print(f"{m:5d} {cfg.kernel_name:24} {'yes' if pre else 'no':>7} {g['old']:7.2f}"
              f" {g['new']:7.2f} {g['new'] / g['old']:7.3f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
