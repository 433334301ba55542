"""Session 8 probe: programmatic dependent launch (PDL) between the two layers of the headline
MLP at 256-4096 rows, where the GPU-time target (5-6 us at 1024) is missed by `layered` (a Triton
first layer and cuBLAS's second, 7.4 us) and `persist` (one launch with a grid barrier, 8.2).
Two Triton GEMM kernels (64 x 64 x 64 tiles, 4 warps, 3 stages: layered's tile; bias + the
module's GELU after the first), launched plainly or with the second one PDL-launched
(launch_pdl=True; it waits with gdc_wait before its first load, the first kernel lets it launch
at once with gdc_launch_dependents), beside the module's own layered and its shipped winners.
Every result checked against the fp32 reference; µs per call by CUDA-graph replay of 20 calls
(gpu_us, as the tuner) and by do_bench of single calls (launches included).
Run from the repository root: python3 docs/h200/s8/pdl_probe.py OUT"""

import sys
from pathlib import Path

import torch
import triton
import triton.language as tl
from triton.testing import do_bench

from mlpgen.emit import entry, graph_cell
from mlpgen.measure import device_problem, gpu_us
from mlpgen.selfcheck import load_module
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import TOLERANCE, reference, rel_error

MOD = load_module(Path("tuned/mlp_256x512x256_gelu_fp16.py"))
_gelu = MOD._gelu  # the module's GELU (tanh.approx erf fit), called from the kernel below
H200 = "NVIDIA H200|sm90|132"


@triton.jit
def linear(x_ptr, w_ptr, b_ptr, y_ptr, M, N: tl.constexpr, K: tl.constexpr, BM: tl.constexpr,
           BN: tl.constexpr, BK: tl.constexpr, GELU: tl.constexpr, WAIT: tl.constexpr,
           RELEASE: tl.constexpr):
    if RELEASE:  # the next kernel (PDL-launched) may start now; it waits for this one's writes
        tl.extra.cuda.gdc_launch_dependents()
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    if WAIT:  # x is the previous kernel's output
        tl.extra.cuda.gdc_wait()
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in tl.range(0, K, BK, num_stages=3):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * K + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    if GELU:
        acc = _gelu(acc)
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)


def two_kernels(x, w, b, h, y, pdl):
    m = x.shape[0]
    grid1 = (triton.cdiv(m, 64), 512 // 64)
    grid2 = (triton.cdiv(m, 64), 256 // 64)
    linear[grid1](x, w[0], b[0], h, m, 512, 256, 64, 64, 64, True, False, pdl, num_warps=4)
    linear[grid2](h, w[1], b[1], y, m, 256, 512, 64, 64, 64, False, pdl, False, num_warps=4,
                  launch_pdl=pdl)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = MLPSpec((256, 512, 256), act="gelu", dtype="fp16")
    lay = entry(KernelConfig("layered", block_m=64, block_n=64, block_k=64, num_warps=4,
                             num_stages=3))
    with open(out / "pdl_probe.log", "w") as log:

        def say(text):
            print(text, flush=True)
            log.write(text + "\n")

        say(f"{'rows':>6} {'contender':<34} {'graph us':>9} {'call us':>9} {'err':>8}")
        for m in (256, 1024, 4096):
            x, w, b = device_problem(spec, m, "cuda", seed=m)
            ref = reference(spec, x, w, b)
            h = torch.empty(m, 512, device="cuda", dtype=torch.float16)
            y = torch.empty(m, 256, device="cuda", dtype=torch.float16)
            shipped = MOD.TUNED[H200][m]
            rows = {
                "two Triton kernels": lambda: two_kernels(x, w, b, h, y, False),
                "two Triton kernels, PDL": lambda: two_kernels(x, w, b, h, y, True),
                "module layered (Triton + cuBLAS)": lambda: MOD._launch(x, w, b, lay),
                f"shipped call {shipped['kernel'][3:30]}": lambda: MOD._launch(x, w, b, shipped),
            }
            if graph_cell(shipped):
                g = graph_cell(shipped)
                rows[f"shipped graph {g['kernel'][3:29]}"] = lambda: MOD._launch(x, w, b, g)
            for name, fn in rows.items():
                try:
                    got = fn()
                    torch.cuda.synchronize()
                    err = rel_error(y if got is None else got, ref)
                    if not err <= TOLERANCE["fp16"]:
                        say(f"{m:>6} {name:<34} WRONG {err:.2e}")
                        continue
                    graph = gpu_us(fn)
                    call = do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3
                    say(f"{m:>6} {name:<34} {graph:9.2f} {call:9.2f} {err:8.1e}")
                except Exception as e:
                    say(f"{m:>6} {name:<34} {type(e).__name__}: {str(e).splitlines()[0][:80]}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
