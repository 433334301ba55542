"""Next-session probe: is the erf GELU's cost in the layered epilogue (+111 us at 262144 rows,
docs/h200/s3/layered_act.log) libdevice's erff? The same Triton GEMM (256->512, 128x128x64,
8 warps, 3 stages) with bias and: no activation; tl.math.erf GELU (what mlpgen renders); GELU
through Abramowitz-Stegun 7.1.26 (|erf error| <= 1.5e-7: one exp, one division, 5 FMAs, no
branch). GPU us by CUDA-graph replay of 10 calls; max abs error of each GELU against torch's.
Run from the repository root: python3 .probe/gelu_probe.py OUT"""
import sys
import torch
import triton
import triton.language as tl
from triton.testing import do_bench


@triton.jit
def _gelu_as(x):
    # Phi(x) = 1 - q for x >= 0, q for x < 0, q = 0.5 * erfc(|x| / sqrt(2)) by A&S 7.1.26
    z = tl.abs(x) * 0.7071067811865476
    t = 1.0 / (1.0 + 0.3275911 * z)
    p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    q = 0.5 * p * tl.exp(-z * z)
    return x * tl.where(x >= 0, 1.0 - q, q)


@triton.jit
def _gelu_as_fdiv(x):
    # the same with an approximate division (div.full) instead of the IEEE one
    z = tl.abs(x) * 0.7071067811865476
    t = tl.fdiv(1.0, 1.0 + 0.3275911 * z)
    p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    q = 0.5 * p * tl.exp(-z * z)
    return x * tl.where(x >= 0, 1.0 - q, q)


@triton.jit
def _tanh_approx(x):
    return tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=r,r", [x], dtype=tl.float32,
                                     is_pure=True, pack=1)


@triton.jit
def _gelu_tanh_erf(x):
    # erf(z) ~ tanh(z (a + b z^2 + c z^4)) (least squares on [0, 3.2], |err| 4e-5 before
    # tanh.approx's own 2^-11), z clamped so the polynomial stays increasing
    z = x * 0.7071067811865476
    z2 = tl.minimum(z * z, 12.0)
    g = z * ((-0.0018154100802733513 * z2 + 0.10414431674387942) * z2 + 1.1281233291765482)
    h = 0.5 * x
    return h + h * _tanh_approx(g)


@triton.jit
def _gelu_tanh_hw(x):
    # the tanh GELU (a different function) through tanh.approx: what the cheapest can cost
    h = 0.5 * x
    return h + h * _tanh_approx(0.7978845608028654 * (x + 0.044715 * x * x * x))


@triton.jit
def gemm(a_ptr, w_ptr, b_ptr, y_ptr, M, K: tl.constexpr, N: tl.constexpr, BM: tl.constexpr,
         BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr, ACT: tl.constexpr):
    pid = tl.program_id(0)
    n_m = tl.cdiv(M, BM)
    n_n: tl.constexpr = (N + BN - 1) // BN
    per_group = GROUP * n_n
    first_m = (pid // per_group) * GROUP
    gm = tl.minimum(n_m - first_m, GROUP)
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
    if ACT == 1:
        acc = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))
    if ACT == 2:
        acc = _gelu_as(acc)
    if ACT == 3:
        acc = _gelu_as_fdiv(acc)
    if ACT == 4:
        acc = _gelu_tanh_erf(acc)
    if ACT == 5:
        acc = _gelu_tanh_hw(acc)
    if ACT == 6:
        acc = acc * tl.sigmoid(acc)
    if ACT == 7:
        acc = acc * (0.5 + 0.5 * _tanh_approx(0.5 * acc))
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=rows[:, None] < M)


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
    w = (torch.randn(512, 256, device=dev) / 16).half()
    b = (torch.randn(512, device=dev) / 10).half()
    lines = []
    for M in (16384, 262144):
        x = torch.randn(M, 256, device=dev).half()
        y = torch.empty(M, 512, device=dev, dtype=torch.float16)
        grid = (M // 128 * 4,)

        def run(act):
            gemm[grid](x, w, b, y, M, 256, 512, 128, 128, 64, 8, act, num_warps=8, num_stages=3)

        lin = torch.nn.functional.linear(x.float(), w.float(), b.float())
        gelu, silu = torch.nn.functional.gelu(lin), torch.nn.functional.silu(lin)
        refs = {0: lin, 6: silu, 7: silu}
        row = [f"M={M}"]
        for act, name in ((0, "bias only"), (1, "libdevice erf gelu"), (2, "A&S gelu"),
                          (3, "A&S fdiv gelu"), (4, "tanh-poly erf gelu"), (5, "tanh gelu (hw)"),
                          (6, "silu tl.sigmoid"), (7, "silu tanh.approx")):
            t = graphed(lambda: run(act))
            run(act)
            ref = refs.get(act, gelu)
            err = (y.float() - ref).abs().max().item()
            if M == 16384:   # the activation's own error, seen through an fp32 output
                y32 = torch.empty(M, 512, device=dev)
                gemm[grid](x, w, b, y32, M, 256, 512, 128, 128, 64, 8, act, num_warps=8,
                           num_stages=3)
                err = (y32 - ref).abs().max().item()
            row.append(f"{name} {t:.1f} us (max abs err {err:.1e})")
        lines.append("; ".join(row))
        print(lines[-1], flush=True)
    open(f"{out}/gelu_probe.log", "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
