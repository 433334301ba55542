"""Session 26 probe: where persist lets the next call's kernel launch (PDL), at the headline's
1024 and 256 rows.

persist opens with _pdl_enter: launch_dependents, then wait. With PDL on, the next call's grid
may launch as soon as this one starts, and that one lets the next launch in turn. The tuner
measured persist linked 1.11-1.13x slower at 1024 rows (run142, run144), and the 1024-row cell
runs without PDL. Variants, for the 1024-row cell's tiles (64 x 64, 32-wide last tiles, 4
stages) and the 256-row cell's (64 x 32, 16-wide last tiles, 4 stages):
  plain  the config without PDL;
  entry  with PDL, as shipped (release and wait at the kernel's start);
  late   with PDL, the wait at the start and the release after the grid barrier: the next call's
         grid launches while this one runs its last layer, and no further grid launches early.
Each is checked and timed by session 24's persist_tiles_probe.main (measure.check at 37 rows,
the timed rows and rows + 13, 2 seeds; then GPU µs as the tuner measures it, a CUDA graph of 20
calls, and the user's call, the variants alternating, medians of PERSIST_PROBE_ROUNDS rounds).
Run from the repository root: python3 docs/h200/s26/persist_pdl_probe.py OUT [ROWS ...]"""

import importlib.util
import os
import sys
from dataclasses import replace
from pathlib import Path

from mlpgen.emit import entry, render
from mlpgen.spec import KernelConfig

ENTER = "    _pdl_enter()  #"
BARRIER = "    _grid_sync(sync_ptr, pid, nprog)\n"


def tiles_probe():
    """Session 24's probe module (its main checks and times a variant table)."""
    path = Path("docs/h200/s24/persist_tiles_probe.py")
    spec = importlib.util.spec_from_file_location("persist_tiles_probe", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def late_release(src: str) -> str:
    """The persist kernel's release moved after its (one) grid barrier."""
    start = src.index("def _k_persist")
    head, body = src[:start], src[start:]
    assert body.count(BARRIER) == 1 and body.count(ENTER) == 1
    body = body.replace(ENTER, "    _pdl_wait()  # the release comes after the barrier;", 1)
    return head + body.replace(BARRIER, BARRIER + "    _pdl_release()\n", 1)


def pdl_variants(spec):
    out = {}
    for label, n, last in (("64x64 last32", 64, 32), ("64x32 last16", 32, 16)):
        plain = KernelConfig(
            "persist",
            block_m=64,
            block_n=n,
            block_k=64,
            num_warps=4,
            num_stages=4,
            last_block_n=last,
        )
        linked = replace(plain, pdl=True)
        src = render(spec, {"test": {1: entry(linked)}}, {})
        out[f"{label} plain"] = (plain, render(spec, {"test": {1: entry(plain)}}, {}), 1, True)
        out[f"{label} entry"] = (linked, src, 1, True)
        out[f"{label} late"] = (linked, late_release(src), 1, True)
    return out


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    probe = tiles_probe()
    probe.grid_variants = pdl_variants  # main's PERSIST_PROBE=grid table
    os.environ["PERSIST_PROBE"] = "grid"
    probe.main(Path(sys.argv[1]), [int(r) for r in sys.argv[2:]] or [1024, 256])
