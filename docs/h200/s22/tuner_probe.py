"""Session 22: chain's host time at the headline's 1024 rows in the tuner's own measure.

run159's loop_probe.py found chain's calls at 14.1-15.9 us in every loop form through the
shipped module (persist's 9.1-11.8), where run155's tune had measured 9.06. The tuner times a
candidate module that holds only the config (measure.candidate_module), right after capturing
a CUDA graph of its calls (measure.gpu_us). For the shipped 1024-row call cell (persist) and its
graph cell (chain), in one process, alternating, ROUNDS rounds (µs per call):
- tuner: measure.measure_candidate itself (verification, GPU time, then host time: the least
  of 15 loops of 50 calls), in this process instead of a worker;
- candidate: the candidate module's mlp() timed the same way (measure.host_us) with no graph
  captured before, and whether its calls were taken by the native lane;
- shipped: the shipped module serving the same cell, the same timing.
Run from the repository root: python3 docs/h200/s22/tuner_probe.py OUT"""

import statistics
import sys
import tempfile
from pathlib import Path

import torch
from headline_cells import MODULE, ROWS, cells, publish

from mlpgen.bench import native_rows
from mlpgen.emit import read_module
from mlpgen.measure import candidate_module, device_problem, host_us, hot_path, measure_candidate
from mlpgen.selfcheck import load_module
from mlpgen.spec import KernelConfig

ROUNDS = 3


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(MODULE)[0]
    shipped = load_module(MODULE)
    table = cells(shipped)
    sync = torch.cuda.synchronize
    x, w, b = device_problem(spec, ROWS, "cuda", seed=1)
    rows: dict[str, dict[str, list]] = {name: {} for name in table}
    with tempfile.TemporaryDirectory() as work, torch.no_grad():
        for _ in range(ROUNDS):
            for name, cell in table.items():
                config = KernelConfig.from_dict(cell)
                r = rows[name]
                m = measure_candidate(spec, ROWS, config, work)
                if not m.ok:
                    sys.exit(f"{name}: {m.verdict} {m.reason}")
                r.setdefault("tuner GPU", []).append(m.us)
                r.setdefault("tuner host", []).append(m.host_us)
                cand = candidate_module(spec, config, Path(work))
                call = hot_path(cand, config, x, w, b)
                r.setdefault("candidate host", []).append(host_us(call, sync))
                r.setdefault("native", []).append(ROWS in native_rows(cand))
                call = hot_path(shipped, config, x, w, b)
                r.setdefault("shipped host", []).append(host_us(call, sync))
                r.setdefault("shipped native", []).append(ROWS in native_rows(shipped))
    cols = [c for c in next(iter(rows.values())) if "native" not in c]
    head = "".join(f"{c:>16}" for c in cols)
    lines = [f"{'cell':10}{head}  native lane (candidate, shipped)"]
    for name, r in rows.items():
        lane = f"{all(r['native'])}, {all(r['shipped native'])}"
        lines.append(
            f"{name:10}" + "".join(f"{statistics.median(r[c]):16.2f}" for c in cols) + f"  {lane}"
        )
        each = "".join(f"{' '.join(f'{v:.2f}' for v in r[c]):>16}" for c in cols)
        lines.append(f"{'':10}{each}")
    publish(out, "tuner_probe.txt", lines, table, ROUNDS, note=" (each round's below)")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
