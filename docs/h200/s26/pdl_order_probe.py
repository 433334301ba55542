"""Written in session 26 for the next session (not run): the order of a kernel's PDL steps, for
the headline's shipped cells that run with PDL (cluster at 1, 16 and 64 rows; persist at 256
and 1024), and chain at 1024 rows.

Every kernel but layered's and persist's opens with _pdl_enter: launch_dependents, then wait.
So the next call's grid may launch as soon as this one starts, and that grid lets its own next
one launch at once (whether several waiting grids cost anything is what this probe asks; not
measured). persist released that way took 8.33
us at 1024 rows against 5.85 releasing after its grid barrier (run188). Variants per cell:
  plain       the cell without PDL;
  shipped     as the module renders it;
  wait first  _pdl_wait, then _pdl_release, at the kernel's start: the next grid launches while
              this one runs, and no grid launches before its predecessor is running.
Session 24's persist_tiles_probe.main checks each variant first (measure.check at the bucket's
rows, rows + 13 and 37 rows, 2 seeds), then times it: GPU µs as the tuner measures it (a CUDA
graph of 20 calls) and the user's call (mlp(), loops of 50 calls and a synchronize). The
variants alternate; each number is the median of PDL_PROBE_ROUNDS rounds (default 5). Tables:
OUT/rows<N>/tiles.txt.
Run from the repository root: python3 docs/h200/s26/pdl_order_probe.py OUT [ROWS ...]"""

import os
import re
import sys
from dataclasses import replace
from pathlib import Path

from mlpgen.emit import entry, read_module, render
from mlpgen.spec import KernelConfig

HEADLINE = Path("tuned/mlp_256x512x256_gelu_fp16.py")
GPU = "NVIDIA H200|sm90|132"
ROUNDS = int(os.environ.get("PDL_PROBE_ROUNDS", "5"))
ENTER = "    _pdl_enter()"
PERSIST_WAIT = "    _pdl_wait()"
PERSIST_RELEASE = "    _pdl_release()"
RELEASE_NOTE = "  # the next kernel (the next call's) may launch now: this one's last layer runs\n"
# configs timed beside the shipped cell: chain at 1024 rows took 1.48x linked (run142), its
# later layers always launched with PDL
EXTRA = {
    1024: [
        KernelConfig(
            "chain", block_m=64, block_n=32, block_k=64, num_warps=4, num_stages=3, pdl=True
        ).to_dict()
    ]
}


def kernel_body(src: str, name: str) -> tuple[int, int]:
    """Where the kernel `name`'s text starts and ends in a rendered module."""
    start = src.index(f"def {name}(")
    end = src.find("\n@triton.jit", start)
    return start, end if end > 0 else src.index("\nKERNELS", start)


def wait_first(src: str, config: KernelConfig) -> str:
    """Each of the config's kernels (chain's: one a layer) waits first, then releases, both at
    its start."""
    for name in re.findall(rf"def ({config.kernel_name}(?:_l\d+)?)\(", src):
        start, end = kernel_body(src, name)
        body = src[start:end]
        if config.strategy == "persist":
            assert body.count(PERSIST_RELEASE) == 1 and body.count(PERSIST_WAIT) == 1
            body = body.replace(PERSIST_RELEASE + RELEASE_NOTE, "", 1)
            wait_line = body[body.index(PERSIST_WAIT) :].split("\n", 1)[0]
            body = body.replace(wait_line, wait_line + "\n" + PERSIST_RELEASE, 1)
        else:
            assert body.count(ENTER) == 1, name
            line = body[body.index(ENTER) :].split("\n", 1)[0]
            body = body.replace(line, PERSIST_WAIT + "\n" + PERSIST_RELEASE, 1)
        src = src[:start] + body + src[end:]
    return src


def variants(spec, cell: dict):
    linked = KernelConfig.from_dict(cell)
    assert linked.pdl, cell
    plain = replace(linked, pdl=False)
    src = render(spec, {"test": {1: entry(linked)}}, {})
    return {
        "plain": (plain, render(spec, {"test": {1: entry(plain)}}, {})),
        "shipped": (linked, src),
        "wait first": (linked, wait_first(src, linked)),
    }


def main(out: Path, rows_list: list[int]) -> None:
    """Session 24's persist_tiles_probe.main, once per row count, on that bucket's variants."""
    sys.path.insert(0, str(Path(__file__).parent))
    from persist_pdl_probe import tiles_probe

    probe = tiles_probe()
    os.environ["PERSIST_PROBE"] = "grid"  # main's table: grid_variants, set per row count below
    probe.ROUNDS = ROUNDS
    spec, tuned, _ = read_module(HEADLINE)
    for rows in rows_list:
        table = {
            f"{rows} {cell['strategy']} {name}": (config, src, 1, True)
            for cell in [tuned[GPU][rows], *EXTRA.get(rows, [])]
            for name, (config, src) in variants(spec, cell).items()
        }
        probe.grid_variants = lambda spec, table=table: table
        probe.main(out / f"rows{rows}", [rows])


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    main(Path(sys.argv[1]), [int(r) for r in sys.argv[2:]] or [1, 16, 64, 256, 1024])
