"""Session 28: the order of rowblock's PDL steps, on the public-matrix cells that run rowblock
with PDL (64,64,64,64,64,3 relu fp16 at 1, 64 and 1024 rows; 128,128,128 silu bf16 at 64 and
1024). Session 26's pdl_order_probe measured the others (chain at 1024 rows waits first since
run192: 5.93 against 9.47 µs; cluster and persist 1.00-1.01x either way) on the headline only.

rowblock's kernel opens with _pdl_enter (release, then wait), as cluster's does. Variants per
cell, from session 26's probe: plain (no PDL), shipped, wait first (_pdl_wait, then
_pdl_release). Each is checked against the fp32 reference first (the bucket's rows, rows + 13
and 37 rows, 2 seeds), then timed as the tuner does (a CUDA graph of 20 calls) and as a user's
call (loops of 50 calls, a synchronize); the variants alternate, medians of PDL_PROBE_ROUNDS
rounds (default 5). Tables: OUT/<module>/rows<N>/tiles.txt.
Run from the repository root:
  python3 docs/h200/s28/rowblock_pdl_order_probe.py OUT MODULE ROWS [ROWS ...]"""

import importlib.util
import os
import sys
from pathlib import Path

S26 = Path("docs/h200/s26")


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(out: Path, module: Path, rows_list: list[int]) -> None:
    sys.path.insert(0, str(S26))
    import persist_pdl_probe

    order = load(S26 / "pdl_order_probe.py")
    order.HEADLINE = module
    order.EXTRA = {}
    made = persist_pdl_probe.tiles_probe

    def tiles_probe():  # session 24's probe reads its spec from HEADLINE too
        probe = made()
        probe.HEADLINE = module
        return probe

    persist_pdl_probe.tiles_probe = tiles_probe
    order.main(out / module.stem, rows_list)


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    main(Path(sys.argv[1]), Path(sys.argv[2]), [int(r) for r in sys.argv[3:]])
