"""Session 6 probe: the split kernel with its second-layer weight tile loaded at the start,
beside the first layer's, instead of after the first layer's dot and activation, so the two
L2 round trips overlap. Made from the rendered module by moving the first output tile's load
(text edit); against the module as rendered, each checked against the fp32 reference (three
launches) and timed (CUDA-graph replay of 20 calls, median).
Run from the repository root: python3 docs/h200/s6/split_prefetch_probe.py OUT"""

import re
import sys
from pathlib import Path

import torch

from mlpgen.emit import entry, render
from mlpgen.measure import device_problem, gpu_us
from mlpgen.selfcheck import load_module
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import reference, rel_error

LOAD = re.compile(
    r"    ns = (\d+) \+ tl\.arange\(0, (\d+)\)\n    w = tl\.load\(\n"
    r"        w1_ptr \+ ns\[:, None\] \* (\d+) \+ hid\[None, :\],\n    \)\n"
)


def prefetched(text: str) -> str:
    m = LOAD.search(text)
    assert m, "no unmasked second-layer load"
    early = m.group(0).replace("ns =", "ns_pre =").replace("w =", "w_pre =").replace(
        "ns[:, None]", "ns_pre[:, None]"
    )
    text = text[: m.start()] + "    ns = ns_pre\n    w = w_pre\n" + text[m.end() :]
    at = text.index("    s = tl.zeros(")
    return text[:at] + early + text[at:]


out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
spec = MLPSpec(widths=(256, 512, 256), act="gelu", dtype="fp16")
S = "split"
tiles = [
    (KernelConfig(S, block_m=16, chunk=32, block_n=256, block_k=128, num_warps=4), (1, 16, 64, 256)),
    (KernelConfig(S, block_m=16, chunk=64, block_n=128, block_k=128, num_warps=4), (1, 64, 256, 1024)),
    (KernelConfig(S, block_m=32, chunk=128, block_n=128, block_k=128, num_warps=8), (256, 1024)),
]
log = open(out / "split_prefetch_probe.log", "w")


def say(text):
    print(text, flush=True)
    log.write(text + "\n")


say(f"{'kernel':<30} {'M':>5} {'as rendered':>11} {'prefetched':>10} {'ratio':>6} {'err':>8} regs")
for cfg, sizes in tiles:
    text = render(spec, {"default": {1: entry(cfg)}}, {})
    mods = []
    for tag, t in (("a", text), ("b", prefetched(text))):
        path = out / f"split_{tag}_{cfg.block_m}_{cfg.chunk}_{cfg.block_n}_{cfg.num_warps}.py"
        path.write_text(t)
        mods.append(load_module(path))
    for m in sizes:
        times, worst, regs = [], 0.0, []
        for mod in mods:
            plan = mod._Plan(entry(cfg), m, torch.empty(m, 256, device="cuda", dtype=torch.float16))
            for seed in range(3):  # fresh inputs each launch: the workspace must come back zero
                x, weights, biases = device_problem(spec, m, "cuda", seed=seed + m)
                worst = max(worst, rel_error(mod._execute(plan, x, weights, biases),
                                             reference(spec, x, weights, biases)))
            times.append(gpu_us(lambda: mod._execute(plan, x, weights, biases)))
            regs.append(next(iter(mod._COMPILED.values())).n_regs)
        name = mods[0].TUNED["default"][1]["kernel"] + f" w{cfg.num_warps}"
        say(f"{name:<30} {m:>5} {times[0]:11.2f} {times[1]:10.2f} {times[1] / times[0]:6.3f} "
            f"{worst:8.1e} {regs[0]}/{regs[1]}")
