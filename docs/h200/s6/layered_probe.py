"""Session 6 probe: `layered` tiles at 1024 and 4096 rows beyond its searched domain (64/128 x
64/128): 32-row and 32-column tiles give its second layer (1024 x 256 outputs: 64 programs
with 64 x 64) more programs than the H200 has SMs. Each checked against the fp32 reference
and timed (CUDA-graph replay of 20 calls, median).
Run from the repository root: python3 docs/h200/s6/layered_probe.py OUT"""

import sys
from pathlib import Path

from mlpgen.emit import entry
from mlpgen.measure import candidate_module, device_problem, gpu_us
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import reference, rel_error

out = Path(sys.argv[1])
work = out / "work"
work.mkdir(parents=True, exist_ok=True)
spec = MLPSpec(widths=(256, 512, 256), act="gelu", dtype="fp16")
log = open(out / "layered_probe.log", "w")


def say(text):
    print(text, flush=True)
    log.write(text + "\n")


tiles = [(bm, bn, bk, w) for bm in (32, 64) for bn in (32, 64) for bk in (64, 128) for w in (4,)]
tiles += [(64, 64, 64, 8), (128, 64, 64, 4)]
say(f"{'tile (m n k warps)':<20} {'1024':>8} {'4096':>8} {'err':>8}")
problems = {m: device_problem(spec, m, "cuda", seed=m) for m in (1024, 4096)}
refs = {m: reference(spec, *p) for m, p in problems.items()}
for bm, bn, bk, w in tiles:
    cfg = KernelConfig("layered", block_m=bm, block_n=bn, block_k=bk, num_warps=w, num_stages=3)
    row, worst = [], 0.0
    try:
        mod = candidate_module(spec, cfg, work)
        for m, (x, weights, biases) in problems.items():
            plan = mod._Plan(entry(cfg), m, x)
            worst = max(worst, rel_error(mod._execute(plan, x, weights, biases), refs[m]))
            row.append(gpu_us(lambda: mod._execute(plan, x, weights, biases)))
        say(f"{f'{bm} {bn} {bk} {w}':<20} {row[0]:8.2f} {row[1]:8.2f} {worst:8.1e}")
    except Exception as e:
        say(f"{f'{bm} {bn} {bk} {w}':<20} {type(e).__name__}: {str(e).splitlines()[0][:90]}")
