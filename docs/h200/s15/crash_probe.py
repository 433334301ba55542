"""Session 15 probe: which cluster tile crashed run111's GPU test ("illegal instruction" at
100,250,70 silu bf16)? Each (spec, dtype, tile) in a process of its own with
CUDA_LAUNCH_BLOCKING=1, launched as the test launches it (module._launch, NaN-poisoned output,
fresh inputs) at 1, 2, 17 and 300 rows, 3 times each; prints ok / the error per case.
run112 ran the first one-row form with paired stores, run113 the same tiles with one value a
store (CRASH_PROBE_TILES=run112: those tiles), run116 the row-by-row form of 1-8 rows.
Run from the repository root: python3 docs/h200/s15/crash_probe.py [one SPEC DTYPE TILE]"""

import math
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SPECS = {"a": ((100, 250, 70), "silu", True), "b": ((33, 64, 17), "relu", False),
         "c": ((256, 512, 256), "gelu", True)}
TILES = {"m16c32": (16, 32, 128, 4), "m16c64w2": (16, 64, 128, 2), "m1c32k256": (1, 32, 256, 4),
         "m1c32k128": (1, 32, 128, 4), "m2c64k128": (2, 64, 128, 4), "m4c32k128": (4, 32, 128, 4),
         "m4c32k256": (4, 32, 256, 4), "m8c32k256": (8, 32, 256, 4)}
if os.environ.get("CRASH_PROBE_TILES") == "run112":  # the tiles run112 and run113 ran
    TILES = {"m16c32": (16, 32, 128, 4), "m16c64w2": (16, 64, 128, 2),
             "m1c32k256": (1, 32, 256, 4), "m1c64w2": (1, 64, 128, 2),
             "m1c32k128": (1, 32, 128, 4), "m1c64k256": (1, 64, 256, 4)}


def one(spec_key, dtype, tile):
    import torch

    from mlpgen.emit import entry, write_module
    from mlpgen.selfcheck import load_module
    from mlpgen.spec import KernelConfig, MLPSpec
    from mlpgen.space import infeasible_reason
    from mlpgen.verify import TOLERANCE, reference, rel_error, random_problem

    widths, act, bias = SPECS[spec_key]
    spec = MLPSpec(widths, act=act, dtype=dtype, bias=bias)
    bm, c, k, w = TILES[tile]
    cfg = KernelConfig("cluster", block_m=bm, chunk=c, block_k=k, num_warps=w)
    why = infeasible_reason(spec, cfg, 232448)
    if why:
        print(f"{spec_key} {dtype} {tile}: infeasible ({why})")
        return
    path = Path(tempfile.mkdtemp()) / f"{spec.name}.py"
    write_module(path, spec, gpu_key="test", table={1: entry(cfg)})
    mod = load_module(path)
    cell = mod.TUNED["test"][1]
    worst = 0.0
    for m in (1, 2, 17, 300):
        for _ in range(3):
            x, weights, biases = random_problem(spec, m, device="cuda")
            buf = torch.full((m + 3, widths[-1]), math.nan, device="cuda", dtype=x.dtype)
            mod._launch(x, weights, biases, cell, out=buf[:m])
            torch.cuda.synchronize()
            assert torch.isnan(buf[m:]).all(), m
            err = rel_error(buf[:m], reference(spec, x, weights, biases))
            assert err <= TOLERANCE[dtype], (m, err)
            worst = max(worst, err)
    print(f"{spec_key} {dtype} {tile}: ok (worst rel err {worst:.1e})")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "one":
        one(*sys.argv[2:])
        sys.exit(0)
    env = dict(os.environ, CUDA_LAUNCH_BLOCKING="1")

    def run(case):
        p = subprocess.run([sys.executable, __file__, "one", *case], env=env,
                           capture_output=True, text=True, timeout=150)
        last = (p.stdout.strip().splitlines() or [""])[-1]
        if p.returncode:
            err = [ln for ln in p.stderr.splitlines() if "Error" in ln or "assert" in ln]
            last = f"{' '.join(case)}: FAILED rc {p.returncode}: {' | '.join(err[-2:])[:200]}"
        return last

    cases = [(s, dt, t) for s in SPECS for dt in ("fp16", "bf16", "fp32") for t in TILES]
    with ThreadPoolExecutor(8) as pool:  # one process per case, 8 at a time on one GPU
        for line in pool.map(run, cases):
            print(line, flush=True)
