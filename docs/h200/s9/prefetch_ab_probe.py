"""Session 9 probe: rowblock and split kernels that load every weight tile before their first
dot (this session's templates, where the tiles fit in registers: layout.prefetches /
split_prefetches) against the same configs as shipped before (weights loaded where used: each
layer's, or split's second slice after the first dot, one memory round trip later), in one
process. Modules: tuned/ (new) and .probe/pre_s9/*_old.py (`git show HEAD~N:tuned/...`, the
modules before this session). Every config is verified against the fp32 reference (bucket M and
an odd M) in both modules; then GPU time per call, old and new alternated over 3 rounds, medians:
`graph` the tuner's measure (gpu_us: do_bench of a CUDA graph of 20 back-to-back calls, L2
flushed per replay) and `cold` do_bench of single calls (L2 flushed before each; launches
included). regs/spills from the compiled kernels. A config whose kernel text is the same in both
modules (no prefetch) is the noise control. Run from the repository root:
python3 docs/h200/s9/prefetch_ab_probe.py"""

import statistics
import sys
from pathlib import Path

import torch
from triton.testing import do_bench

from mlpgen.emit import entry
from mlpgen.measure import check, device_problem, gpu_us
from mlpgen.render import render_kernel
from mlpgen.selfcheck import load_module
from mlpgen.spec import KernelConfig, MLPSpec

H200 = "NVIDIA H200|sm90|132"
K = KernelConfig


def split(m, c, n, w):
    return K("split", block_m=m, chunk=c, block_n=n, block_k=128, num_warps=w, num_stages=1)


def rowblock(m, c, w):
    return K("rowblock", block_m=m, chunk=c, num_warps=w, num_stages=1)


# (module stem, bucket, config): the shipped winners that prefetch now, alternatives that do,
# and controls that do not (identical kernels)
CASES = [
    ("mlp_256x512x256_gelu_fp16", 1, split(16, 32, 256, 4)),
    ("mlp_256x512x256_gelu_fp16", 64, split(16, 32, 256, 4)),
    ("mlp_256x512x256_gelu_fp16", 256, split(16, 64, 128, 8)),
    ("mlp_256x512x256_gelu_fp16", 256, split(16, 64, 128, 4)),  # control: in place
    ("mlp_256x512x256_gelu_fp16", 1024, split(16, 128, 128, 8)),
    ("mlp_256x512x256_gelu_fp16", 1024, split(16, 64, 128, 8)),
    ("mlp_256x512x256_gelu_fp16", 1024, split(16, 128, 128, 4)),  # control: in place
    ("mlp_64x64x64x64x64x3_relu_fp16", 1, rowblock(16, 64, 8)),
    ("mlp_64x64x64x64x64x3_relu_fp16", 64, rowblock(64, 64, 4)),
    ("mlp_64x64x64x64x64x3_relu_fp16", 64, rowblock(64, 64, 8)),
    ("mlp_64x64x64x64x64x3_relu_fp16", 64, rowblock(16, 64, 8)),
    ("mlp_64x64x64x64x64x3_relu_fp16", 1024, rowblock(64, 64, 8)),
    ("mlp_128x128x128_silu_bf16", 1, rowblock(16, 128, 8)),
    ("mlp_128x128x128_silu_bf16", 64, rowblock(16, 128, 4)),
    ("mlp_128x128x128_silu_bf16", 64, rowblock(16, 128, 8)),
    ("mlp_1024x4096x1024_gelu_tanh_bf16", 64, split(16, 64, 128, 4)),  # control: wide
]


def compiled_stats(mod, kernel_name):
    for key, ck in mod._COMPILED.items():
        if getattr(key[0], "__name__", "") == kernel_name:
            return ck.n_regs, ck.n_spills
    return None, None


def main():
    new = {p.stem: load_module(p) for p in sorted(Path("tuned").glob("mlp_*.py"))}
    old = {p.stem[:-4]: load_module(p) for p in sorted(Path(".probe/pre_s9").glob("mlp_*_old.py"))}
    print(f"{'spec':34s} {'M':>5s} {'config':28s} {'pre':>3s} {'old graph':>9s} {'new graph':>9s}"
          f" {'ratio':>6s} {'old cold':>8s} {'new cold':>8s} {'ratio':>6s} {'regs o/n':>9s} {'spill':>5s}")
    for stem, m, cfg in CASES:
        spec = MLPSpec.from_dict(new[stem].SPEC)
        pre = "prefetched" in render_kernel(spec, cfg).splitlines()[2]
        cell = entry(cfg)
        fns, bad = {}, ""
        for tag, mod in (("old", old[stem]), ("new", new[stem])):
            run = lambda x, w, b, out=None, mod=mod: mod._launch(x, w, b, cell, out=out)  # noqa: E731
            for mm in (m, m + 7):
                err, why = check(run, spec, mm, "cuda", 1)
                if why:
                    bad += f" {tag}: {why}"
            x, w, b = device_problem(spec, m, "cuda", 2)
            fns[tag] = (lambda mod=mod, x=x, w=w, b=b: mod._launch(x, w, b, cell))
        if bad:
            print(f"{stem:34s} {m:5d} {cfg.kernel_name:28s} WRONG{bad}")
            continue
        graph, cold = {"old": [], "new": []}, {"old": [], "new": []}
        for _ in range(3):
            for tag in ("old", "new"):
                graph[tag].append(gpu_us(fns[tag]))
                cold[tag].append(do_bench(fns[tag], warmup=10, rep=40, return_mode="median") * 1e3)
        g = {t: statistics.median(v) for t, v in graph.items()}
        c = {t: statistics.median(v) for t, v in cold.items()}
        ro, so = compiled_stats(old[stem], cfg.kernel_name)
        rn, sn = compiled_stats(new[stem], cfg.kernel_name)
        print(f"{stem:34s} {m:5d} {cfg.kernel_name:28s} {'yes' if pre else 'no':>3s}"
              f" {g['old']:9.2f} {g['new']:9.2f} {g['new'] / g['old']:6.3f}"
              f" {c['old']:8.2f} {c['new']:8.2f} {c['new'] / c['old']:6.3f}"
              f" {ro!s:>4s}/{rn!s:<4s} {so!s}/{sn!s}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
