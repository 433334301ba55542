"""Prototype: split-hidden 2-layer MLP. Program (r, c) computes hidden chunk c of row block r
and adds its share of the output into an fp32 workspace with atomics; the last program of a
row block to arrive adds the bias, writes y and re-zeroes the workspace and its counter."""
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["M"])
def splith(x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, ws_ptr, cnt_ptr, M,
           K: tl.constexpr, H: tl.constexpr, N: tl.constexpr,
           BM: tl.constexpr, CH: tl.constexpr, BK: tl.constexpr, BN: tl.constexpr,
           NCH: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_c = tl.program_id(1)
    rows = (pid_m * BM + tl.arange(0, BM)).to(tl.int64)
    row_ok = rows[:, None] < M
    hid = pid_c * CH + tl.arange(0, CH)
    s = tl.zeros((BM, CH), dtype=tl.float32)
    for k0 in tl.static_range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=row_ok & (ks[None, :] < K), other=0.0)
        w = tl.load(w0_ptr + hid[:, None] * K + ks[None, :], mask=(hid[:, None] < H) & (ks[None, :] < K), other=0.0)
        s = tl.dot(a, tl.trans(w), s)
    s += tl.load(b0_ptr + hid, mask=hid < H, other=0.0).to(tl.float32)[None, :]
    s = 0.5 * s * (1.0 + tl.math.erf(s * 0.7071067811865476))
    h = s.to(x_ptr.dtype.element_ty)
    for n0 in tl.static_range(0, N, BN):
        ns = n0 + tl.arange(0, BN)
        w = tl.load(w1_ptr + ns[:, None] * H + hid[None, :], mask=(ns[:, None] < N) & (hid[None, :] < H), other=0.0)
        part = tl.dot(h, tl.trans(w))
        tl.atomic_add(ws_ptr + rows[:, None] * N + ns[None, :], part, mask=row_ok & (ns[None, :] < N), sem="relaxed")
    done = tl.atomic_add(cnt_ptr + pid_m, 1, sem="acq_rel")
    if done == NCH - 1:
        for n0 in tl.static_range(0, N, BN):
            ns = n0 + tl.arange(0, BN)
            ptrs = ws_ptr + rows[:, None] * N + ns[None, :]
            ok = row_ok & (ns[None, :] < N)
            v = tl.load(ptrs, mask=ok, other=0.0, cache_modifier=".cg")
            v += tl.load(b1_ptr + ns, mask=ns < N, other=0.0).to(tl.float32)[None, :]
            tl.store(y_ptr + rows[:, None] * N + ns[None, :], v.to(y_ptr.dtype.element_ty), mask=ok)
            tl.store(ptrs, tl.zeros((BM, BN), dtype=tl.float32), mask=ok)
        tl.atomic_xchg(cnt_ptr + pid_m, 0)


def run(x, w0, b0, w1, b1, ws, cnt, BM, CH, BK, BN, num_warps=4, num_stages=1):
    import torch
    M, K = x.shape
    H, N = w0.shape[0], w1.shape[0]
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    nch = triton.cdiv(H, CH)
    grid = (triton.cdiv(M, BM), nch)
    return splith[grid](x, y, w0, b0, w1, b1, ws, cnt, M, K=K, H=H, N=N, BM=BM, CH=CH, BK=BK, BN=BN,
                        NCH=nch, num_warps=num_warps, num_stages=num_stages), y


if __name__ == "__main__":
    import os
    os.environ.setdefault("TRITON_INTERPRET", "1")
    import torch
    torch.manual_seed(0)
    M, K, H, N = 37, 40, 100, 24
    x = torch.randn(M, K); w0 = torch.randn(H, K) / K**.5; b0 = torch.randn(H); w1 = torch.randn(N, H) / H**.5; b1 = torch.randn(N)
    ws = torch.zeros(M + 16, N); cnt = torch.zeros(8, dtype=torch.int32)
    ref = torch.nn.functional.gelu(x @ w0.T + b0) @ w1.T + b1
    for _ in range(2):
        _, y = run(x, w0, b0, w1, b1, ws, cnt, 16, 32, 32, 16)
        print((y - ref).abs().max().item(), ws.abs().max().item(), cnt.tolist())
