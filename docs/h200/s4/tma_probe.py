"""Next-session probe: does a persistent, TMA-fed GEMM close the gap to cuBLAS for the
headline's layer 1 (256 -> 512, bias + GELU in the epilogue) at 16384 and 262144 rows?
The shipped large-batch kernels load through pointers (cp.async) and run one tile per
program; the bias-only GEMM ran at ~320 TFLOP/s against cuBLAS's ~430 (BENCHMARKS.md).
Contenders, µs per call by CUDA-graph replay of 10 calls: cuBLAS F.linear (bias, no GELU),
eager F.linear + F.gelu, the pointer tile (what `layered` renders, 128x128x64 w8 s3), and
the TMA persistent kernel over a few tiles / stage counts, with and without the GELU.
Run from the repository root: python3 .probe/tma_probe.py OUT"""
import sys

import torch
import triton
import triton.language as tl
from triton.testing import do_bench
from triton.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def _tanh(x):
    return tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=r,r", [x], dtype=tl.float32,
                                     is_pure=True, pack=1)


@triton.jit
def _gelu(x):  # mlpgen's: erf(z) ~ tanh(z (a + b z^2 + c z^4))
    z = x * 0.7071067811865476
    z2 = tl.minimum(z * z, 12.0)
    g = z * ((-0.0018154100802733513 * z2 + 0.10414431674387942) * z2 + 1.1281233291765482)
    h = 0.5 * x
    return h + h * _tanh(g)


@triton.jit
def pointer_tile(a_ptr, w_ptr, b_ptr, y_ptr, M, K: tl.constexpr, N: tl.constexpr,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACT: tl.constexpr):
    pid = tl.program_id(0)
    n_m = tl.cdiv(M, BM)
    n_n: tl.constexpr = N // BN
    per_group = 8 * n_n
    first_m = (pid // per_group) * 8
    gm = tl.minimum(n_m - first_m, 8)
    pid_m = first_m + (pid % per_group) % gm
    pid_n = (pid % per_group) // gm
    rows = pid_m.to(tl.int64) * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * K + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    if ACT:
        acc = _gelu(acc)
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=rows[:, None] < M)


@triton.jit
def tma_persistent(a_desc, w_desc, y_desc, b_ptr, M, K: tl.constexpr, N: tl.constexpr,
                   BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACT: tl.constexpr,
                   SUBTILE: tl.constexpr, NUM_SMS: tl.constexpr):
    """Tiles in a grid-stride loop (flattened with the k loop, so the next tile's loads
    overlap this tile's epilogue), operands through TMA descriptors."""
    n_m = tl.cdiv(M, BM)
    n_n: tl.constexpr = N // BN
    k_tiles: tl.constexpr = K // BK
    num_tiles = n_m * n_n
    per_group = 8 * n_n
    tile_id = tl.program_id(0) - NUM_SMS
    ki = -1
    pid_m = 0
    pid_n = 0
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    tiles_here = tl.cdiv(num_tiles - tl.program_id(0), NUM_SMS)
    for _ in tl.range(0, tiles_here * k_tiles, flatten=True):
        ki = tl.where(ki == k_tiles - 1, 0, ki + 1)
        if ki == 0:
            tile_id += NUM_SMS
            first_m = (tile_id // per_group) * 8
            gm = tl.minimum(n_m - first_m, 8)
            pid_m = first_m + (tile_id % per_group) % gm
            pid_n = (tile_id % per_group) // gm
        a = a_desc.load([pid_m * BM, ki * BK])
        w = w_desc.load([pid_n * BN, ki * BK])
        acc = tl.dot(a, w.T, acc)
        if ki == k_tiles - 1:
            cols = pid_n * BN + tl.arange(0, BN)
            acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
            if ACT:
                acc = _gelu(acc)
            if SUBTILE:
                acc3 = tl.reshape(acc, (BM, 2, BN // 2))
                acc3 = tl.permute(acc3, (0, 2, 1))
                lo, hi = tl.split(acc3)
                y_desc.store([pid_m * BM, pid_n * BN], lo.to(y_desc.dtype))
                y_desc.store([pid_m * BM, pid_n * BN + BN // 2], hi.to(y_desc.dtype))
            else:
                y_desc.store([pid_m * BM, pid_n * BN], acc.to(y_desc.dtype))
            acc = tl.zeros((BM, BN), dtype=tl.float32)


def graphed(fn, n=10):
    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n):
            fn()
    return do_bench(g.replay, warmup=50, rep=300, return_mode="median") * 1e3 / n


def main(out):
    dev = "cuda"
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    # TMA descriptors built on the device need a scratch allocator in some triton versions
    triton.set_allocator(lambda size, align, stream: torch.empty(size, device=dev, dtype=torch.int8))
    K, N = 256, 512
    w = (torch.randn(N, K, device=dev) / 16).half()
    b = (torch.randn(N, device=dev) / 10).half()
    lines = []
    for M in (16384, 262144):
        x = torch.randn(M, K, device=dev).half()
        y = torch.empty(M, N, device=dev, dtype=torch.float16)
        lin = torch.nn.functional.linear(x.float(), w.float(), b.float())
        refs = {0: lin, 1: torch.nn.functional.gelu(lin)}
        row = [f"M={M}: cuBLAS linear {graphed(lambda: torch.nn.functional.linear(x, w, b)):.1f}",
               "eager linear+gelu "
               f"{graphed(lambda: torch.nn.functional.gelu(torch.nn.functional.linear(x, w, b))):.1f}"]
        for act in (0, 1):
            grid = (M // 128 * (N // 128),)
            run = lambda: pointer_tile[grid](x, w, b, y, M, K, N, 128, 128, 64, act,  # noqa: E731
                                             num_warps=8, num_stages=3)
            t = graphed(run)
            run()
            err = (y.float() - refs[act]).abs().max().item()
            row.append(f"pointer 128x128x64 w8 s3 act{act} {t:.1f} (err {err:.1e})")
        for bm, bn, bk, warps, stages, sub in ((128, 128, 64, 8, 3, 0), (128, 128, 64, 8, 4, 1),
                                               (128, 256, 64, 8, 3, 1), (128, 128, 128, 8, 2, 1),
                                               (64, 256, 64, 4, 4, 1)):
            a_desc = TensorDescriptor.from_tensor(x, [bm, bk])
            w_desc = TensorDescriptor.from_tensor(w, [bn, bk])
            y_desc = TensorDescriptor.from_tensor(y, [bm, bn // 2 if sub else bn])
            for act in (0, 1):
                grid = (min(sms, M // bm * (N // bn)),)

                def run():
                    tma_persistent[grid](a_desc, w_desc, y_desc, b, M, K, N, bm, bn, bk, act, sub,
                                         sms, num_warps=warps, num_stages=stages)
                try:
                    t = graphed(run)
                    y.zero_()
                    run()
                    err = (y.float() - refs[act]).abs().max().item()
                    row.append(f"tma {bm}x{bn}x{bk} w{warps} s{stages} sub{sub} act{act} {t:.1f} "
                               f"(err {err:.1e})")
                except Exception as e:  # a tile that does not fit: say so and go on
                    row.append(f"tma {bm}x{bn}x{bk} w{warps} s{stages} sub{sub} act{act} failed: "
                               f"{type(e).__name__}: {str(e).splitlines()[0][:80]}")
                print(row[-1], flush=True)
        lines.append("; ".join(row))
    open(f"{out}/tma_probe.log", "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
