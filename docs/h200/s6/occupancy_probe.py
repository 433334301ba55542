"""Session 6 probe: stream_tma's persistent grid with more than one program per SM.

The shipped grid is one program per SM (min(row blocks, SMs)); 64-row tiles with 4 warps then
leave each SM one warpgroup (BENCHMARKS: 654 us at 262144). Two or three resident programs let
one's activation epilogue overlap another's MMAs. For each tile and k in (1, 2, 3, all): the
grid min(row blocks, k * SMs), checked against the fp32 reference and timed (CUDA-graph replay,
median), with the compiled kernel's registers, shared memory and spills.
Run from the repository root: python3 docs/h200/s6/occupancy_probe.py OUT"""

import sys
from pathlib import Path

import torch
import triton

from mlpgen.measure import candidate_module, device_problem, gpu_us
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import reference, rel_error

out = Path(sys.argv[1])
work = out / "work"
work.mkdir(parents=True, exist_ok=True)
spec = MLPSpec(widths=(256, 512, 256), act="gelu", dtype="fp16")
sms = torch.cuda.get_device_properties(0).multi_processor_count
T = "stream_tma"
configs = [
    KernelConfig(T, block_m=128, block_n=64, chunk=128, num_warps=8, num_stages=2),  # shipped
    KernelConfig(T, block_m=128, block_n=32, chunk=128, num_warps=8, num_stages=2),
    KernelConfig(T, block_m=64, block_n=32, chunk=128, num_warps=4, num_stages=2),
    KernelConfig(T, block_m=64, block_n=32, chunk=64, num_warps=4, num_stages=2),
    KernelConfig(T, block_m=64, block_n=64, chunk=128, num_warps=4, num_stages=2),
    KernelConfig(T, block_m=64, block_n=32, chunk=128, num_warps=4, num_stages=3),
]
log = open(out / "occupancy_probe.log", "w")


def say(text):
    print(text, flush=True)
    log.write(text + "\n")


say(f"{'M':>7} {'kernel':<30} {'w':>2} {'s':>2} {'regs':>4} {'smem':>6} {'spill':>5}"
    "   k=1      k=2      k=3    k=all   err")
for m in (16384, 65536, 262144):
    x, weights, biases = device_problem(spec, m, "cuda", seed=m)
    ref = reference(spec, x, weights, biases)
    for cfg in configs:
        try:
            mod = candidate_module(spec, cfg, work)
        except Exception as e:
            say(f"{m:>7} {cfg} render failed: {e}")
            continue
        times, worst, info = [], 0.0, ""
        for k in (1, 2, 3, None):
            def grid(c, mm, xx, k=k):
                blocks = triton.cdiv(mm, c["block_m"])
                return (blocks if k is None else min(blocks, k * sms), 1)

            mod._grid = grid
            mod._COMPILED.clear()
            try:
                from mlpgen.emit import entry

                plan = mod._Plan(entry(cfg), m, x)
                y = mod._execute(plan, x, weights, biases)
                torch.cuda.synchronize()
                worst = max(worst, rel_error(y, ref))
                times.append(gpu_us(lambda: mod._execute(plan, x, weights, biases)))
                c = next(iter(mod._COMPILED.values()))
                info = f"{c.n_regs:>4} {c.metadata.shared:>6} {c.n_spills:>5}"
            except Exception as e:
                times.append(float("nan"))
                info = info or f"error: {type(e).__name__}: {str(e).splitlines()[0][:80]}"
        ts = " ".join(f"{t:8.1f}" for t in times)
        say(f"{m:>7} {mod.TUNED['default'][1]['kernel']:<30} {cfg.num_warps:>2} "
            f"{cfg.num_stages:>2} {info} {ts} {worst:.1e}")
