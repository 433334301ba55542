"""Session 17 probe: the one-value remote store (_cluster_store1, the row form's) with replicas
left out: of the lanes of a warp holding one output (a reduction's result sits in every lane
that reduced it: 4 lanes each of the one-row kernel's 256 outputs, 8 remote stores a thread for
2 values, offline sm_90a compile), only the lowest stores (match.any.sync). docs/h200/s17/
rows_after_module.py (the templates with it) against rows_before_module.py (the templates of
commit b477f12), the same configs side by side in one process at 1, 16 and 64 rows: the row
form (1-8 rows a cluster) and a 16-row dot-form tile (unchanged: a control). Every config of
both modules is checked first (NaN-poisoned output, fp32 reference) at 1, 3, 17 and 100 rows,
2 seeds; then GPU us per call as the tuner measures it (measure.gpu_us: CUDA graph of 20 calls)
and one call captured in a CUDA graph replayed 200 times, the configs alternating, medians of 5
rounds. Run from the repository root: python3 docs/h200/s17/dedup_probe.py OUT"""

import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from prefetch_probe import replay  # noqa: E402

from mlpgen.emit import read_module  # noqa: E402
from mlpgen.measure import check, device_problem, gpu_us  # noqa: E402
from mlpgen.selfcheck import load_module  # noqa: E402
from mlpgen.spec import KernelConfig  # noqa: E402

SRC = Path("tuned/mlp_256x512x256_gelu_fp16.py")
BEFORE = Path("docs/h200/s17/rows_before_module.py")
FIRST = Path("docs/h200/s17/rows_after_module.py")
CONFIGS = [
    KernelConfig("cluster", block_m=m, chunk=c, block_k=k, num_warps=w)
    for m, c, k, w in [(1, 32, 128, 4), (1, 32, 256, 4), (1, 64, 128, 4), (1, 32, 128, 2),
                       (1, 64, 256, 4), (2, 32, 128, 4), (4, 32, 128, 4), (8, 32, 128, 4),
                       (16, 32, 128, 4)]
]  # the modules' table, in its order
ROWS = {1: (1,), 16: (1, 2, 4, 8, 16), 64: (1, 2, 4, 8, 16)}  # rows -> block_m timed


def label(c):
    return f"m{c.block_m}c{c.chunk}k{c.block_k}w{c.num_warps}"


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(SRC)[0]
    mods = {"after": load_module(FIRST), "before": load_module(BEFORE)}
    shipped = load_module(SRC)  # its one-row cluster kernel (the 16-row winner): a reference
    one_row = shipped.TUNED[shipped.gpu_key()][16]
    assert one_row["block_m"] == 1, one_row
    lines = []

    def say(s):
        lines.append(s)
        print(s, flush=True)

    cells = {}
    for i, c in enumerate(CONFIGS, 1):
        for form, mod in mods.items():
            cell = mod.TUNED["test"][i]
            assert cell["kernel"] == c.kernel_name and cell["num_warps"] == c.num_warps

            def run(x, w, b, out=None, cell=cell, mod=mod):
                return mod._launch(x, w, b, cell, out=out)
            for m in (1, 3, 17, 100):
                for seed in range(2):
                    err, why = check(run, spec, m, "cuda", seed)
                    assert not why, (form, label(c), m, why)
            cells[(label(c), form)] = (mod, cell)
        say(f"checked {label(c)}: ok (after and before)")
    for m in ROWS:
        x, w, b = device_problem(spec, m, "cuda", 0)
        y = torch.empty(m, spec.widths[-1], device="cuda", dtype=x.dtype)
        keys = [k for k in cells if cells[k][1]["block_m"] in ROWS[m]]
        fns = {k: (lambda mod=cells[k][0], c=cells[k][1], x=x, w=w, b=b, y=y:
                   mod._launch(x, w, b, c, out=y)) for k in keys}
        fns[("shipped one-row", "ref")] = lambda x=x, w=w, b=b, y=y: shipped._launch(
            x, w, b, one_row, out=y)
        t = {k: {"gpu": [], "graph": []} for k in fns}
        for _ in range(5):
            for k, fn in fns.items():
                t[k]["gpu"].append(gpu_us(fn))
                t[k]["graph"].append(replay(fn))
        say(f"{m} rows: {'config':>14} {'gpu before':>10} {'after':>7} {'ratio':>6}"
            f" {'graph before':>12} {'after':>7} {'ratio':>6}")
        for name in dict.fromkeys(k[0] for k in keys):
            med = {(f, what): statistics.median(t[(name, f)][what])
                   for f in ("before", "after") for what in ("gpu", "graph")}
            say(f"{'':>10}{name:>14} {med['before', 'gpu']:10.2f} {med['after', 'gpu']:7.2f}"
                f" {med['after', 'gpu'] / med['before', 'gpu']:6.2f}"
                f" {med['before', 'graph']:12.2f} {med['after', 'graph']:7.2f}"
                f" {med['after', 'graph'] / med['before', 'graph']:6.2f}")
        ref = t[("shipped one-row", "ref")]
        say(f"{'':>10}{one_row['kernel']:>24} {statistics.median(ref['gpu']):7.2f}"
            f" (graph {statistics.median(ref['graph']):.2f})")
    (out / "dedup.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
