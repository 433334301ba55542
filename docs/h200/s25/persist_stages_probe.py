"""Written in session 25 for the next session (no device time was left): persist's pipeline
depth at the headline's 1024 and 256 rows, outside the space.

The space searches persist with num_stages 3 and 4 and k steps of 64; 4 stages took the 1024-row
cell from 6.64 to 6.48 µs (run179), 2 stages were 1.35x slower than 3 (run171): the kernel
waits on its loads (ncu, run183). Variants, each a KernelConfig rendered by the module itself:
the 1024-row cell's tiles (64 x 64, 32-wide last tiles, 4 warps) with k steps of 64 and 3-6
stages, of 32 with 4-8, of 128 with 3-4; the 256-row cell's (64 x 32, 16-wide last tiles) with
4-6 stages. Each is checked and timed by session 24's persist_tiles_probe.main (measure.check
at 37 rows, the timed rows and rows + 13, 2 seeds; then GPU µs as the tuner measures it and the
user's call, the variants alternating, medians of PERSIST_PROBE_ROUNDS rounds).
Run from the repository root: python3 docs/h200/s25/persist_stages_probe.py OUT [ROWS ...]"""

import importlib.util
import os
import sys
from pathlib import Path

from mlpgen.emit import entry, render
from mlpgen.spec import KernelConfig


def tiles_probe():
    """Session 24's probe module (its main checks and times a variant table)."""
    path = Path("docs/h200/s24/persist_tiles_probe.py")
    spec = importlib.util.spec_from_file_location("persist_tiles_probe", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def stage_variants(spec):
    def one(n, last, k, s):
        config = KernelConfig(
            "persist",
            block_m=64,
            block_n=n,
            block_k=k,
            num_warps=4,
            num_stages=s,
            last_block_n=last,
        )
        return (config, render(spec, {"test": {1: entry(config)}}, {}), 1, True)

    out = {}
    for k, stages in ((64, (3, 4, 5, 6)), (32, (4, 6, 8)), (128, (3, 4))):
        for s in stages:
            out[f"64x64 last32 k{k} s{s}"] = one(64, 32, k, s)
    for s in (4, 5, 6):
        out[f"64x32 last16 k64 s{s}"] = one(32, 16, 64, s)
    return out


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    probe = tiles_probe()
    probe.grid_variants = stage_variants  # main's PERSIST_PROBE=grid table
    os.environ["PERSIST_PROBE"] = "grid"
    probe.main(Path(sys.argv[1]), [int(r) for r in sys.argv[2:]] or [1024, 256])
