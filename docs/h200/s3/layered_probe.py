"""Probe: layer 1 of the headline (256->512, bias+GELU erf) as one Triton GEMM with the bias and
activation in its epilogue, against cuBLAS linear + separate GELU; then the whole 2-layer MLP
as that kernel + cuBLAS linear2, against eager. GPU times: do_bench median (ms->us)."""
import json, sys, itertools
import torch, triton, triton.language as tl
from triton.testing import do_bench

@triton.jit
def gemm_gelu(a_ptr, w_ptr, b_ptr, y_ptr, M, K: tl.constexpr, N: tl.constexpr,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr, ACT: tl.constexpr):
    pid = tl.program_id(0)
    n_m = tl.cdiv(M, BM)
    n_n: tl.constexpr = (N + BN - 1) // BN
    per_group = GROUP * n_n
    g = pid // per_group
    first_m = g * GROUP
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
    if ACT:
        acc = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], acc.to(y_ptr.dtype.element_ty), mask=rows[:, None] < M)

def launch(x, w, b, cfg, act=True):
    M, K = x.shape; N = w.shape[0]
    bm, bn, bk, warps, stages, group = cfg
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    gemm_gelu[grid](x, w, b, y, M, K, N, bm, bn, bk, group, act, num_warps=warps, num_stages=stages)
    return y

def us(fn):
    return do_bench(fn, warmup=50, rep=300, return_mode="median") * 1e3

def main(out):
    torch.manual_seed(0)
    dev = "cuda"
    w1 = (torch.randn(512, 256, device=dev) / 16).half(); b1 = (torch.randn(512, device=dev) / 10).half()
    w2 = (torch.randn(256, 512, device=dev) / 22).half(); b2 = (torch.randn(256, device=dev) / 10).half()
    cfgs = [(bm, bn, bk, wp, st, 8) for bm, bn, bk, wp, st in [
        (128, 128, 64, 4, 3), (128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (128, 256, 64, 8, 4),
        (64, 256, 64, 4, 3), (128, 128, 128, 8, 3), (128, 256, 32, 8, 4), (256, 128, 64, 8, 3),
        (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (128, 512, 64, 8, 3), (256, 256, 64, 8, 3)]]
    res = {}
    lines = []
    for M in (4096, 16384, 65536, 262144):
        x = torch.randn(M, 256, device=dev).half()
        ref_h = torch.nn.functional.gelu(torch.nn.functional.linear(x.float(), w1.float(), b1.float()))
        eager_l1 = us(lambda: torch.nn.functional.gelu(torch.nn.functional.linear(x, w1, b1)))
        lin1 = us(lambda: torch.nn.functional.linear(x, w1, b1))
        h = torch.nn.functional.gelu(torch.nn.functional.linear(x, w1, b1))
        lin2 = us(lambda: torch.nn.functional.linear(h, w2, b2))
        eager = us(lambda: torch.nn.functional.linear(torch.nn.functional.gelu(torch.nn.functional.linear(x, w1, b1)), w2, b2))
        best = None
        for cfg in cfgs:
            try:
                y = launch(x, w1, b1, cfg)
                err = ((y.float() - ref_h).abs().max() / ref_h.abs().max()).item()
                t = us(lambda: launch(x, w1, b1, cfg))
            except Exception as e:
                lines.append(f"M={M} cfg={cfg} FAIL {type(e).__name__}: {str(e)[:100]}")
                continue
            res[f"{M}|{cfg}"] = (t, err)
            if err < 1e-2 and (best is None or t < best[0]):
                best = (t, cfg)
            lines.append(f"M={M} cfg={cfg} {t:8.2f} us err {err:.1e} ({2*M*256*512/t/1e6:.0f} TFLOP/s)")
        cfg = best[1]
        fused = us(lambda: torch.nn.functional.linear(launch(x, w1, b1, cfg), w2, b2))
        lines.append(f"== M={M}: eager {eager:.1f} (lin1 {lin1:.1f}, lin1+gelu {eager_l1:.1f}, lin2 {lin2:.1f}); "
                     f"best triton l1+gelu {best[0]:.1f} {cfg}; layered total {fused:.1f} = {fused/eager:.3f}x eager")
        print(lines[-1], flush=True)
    open(f"{out}/layered_probe.log", "w").write("\n".join(lines) + "\n")
    json.dump(res, open(f"{out}/layered_probe.json", "w"))

if __name__ == "__main__":
    main(sys.argv[1])
