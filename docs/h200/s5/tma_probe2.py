"""Session-5 probe: can TMA descriptors (and Hopper warp specialisation) close the large-batch
gap for the headline 256 -> 512 (GELU) -> 256 fp16 at 16384 / 262144 rows?
Contenders, us per call by CUDA-graph replay of 10 calls (median of do_bench):
  gemm layer 1 (K=256, N=512, bias+GELU) and layer 2 (K=512, N=256, bias):
    cuBLAS F.linear, the pointer tile (layered's), the flattened TMA persistent kernel,
    the tutorial-style descriptor-persistent kernel with warp_specialize False/True;
  whole MLP: eager, the shipped module (stream), a TMA-fed stream kernel (one row block per
    program, or persistent over row blocks).
Every result is checked against an fp32 reference; errors are printed beside the time.
python3 .probe/tma_probe2.py OUT [M ...]   (TRITON_INTERPRET=1 with small M checks on CPU)"""
import importlib.util
import os
import sys
import time

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

INTERP = os.environ.get("TRITON_INTERPRET") == "1"
DEV = "cpu" if INTERP else "cuda"


@triton.jit
def _tanh(x):
    if INTERP_C:
        return 2.0 / (1.0 + tl.exp(-2.0 * x)) - 1.0
    else:
        return tl.inline_asm_elementwise("tanh.approx.f32 $0, $1;", "=r,r", [x],
                                         dtype=tl.float32, is_pure=True, pack=1)


INTERP_C = tl.constexpr(INTERP)


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
def tma_flat(a_desc, w_desc, y_desc, b_ptr, M, K: tl.constexpr, N: tl.constexpr,
             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACT: tl.constexpr,
             NUM_SMS: tl.constexpr):
    """Grid-stride tiles flattened with the k loop (next tile's loads overlap the epilogue)."""
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
            y_desc.store([pid_m * BM, pid_n * BN], acc.to(y_desc.dtype))
            acc = tl.zeros((BM, BN), dtype=tl.float32)


@triton.jit
def tma_ws(a_desc, w_desc, y_desc, b_ptr, M, K: tl.constexpr, N: tl.constexpr,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACT: tl.constexpr,
           NUM_SMS: tl.constexpr, WS: tl.constexpr):
    """The persistent-matmul tutorial's shape: a tile loop (warp-specialised when WS) around
    a k loop, operands through descriptors."""
    n_m = tl.cdiv(M, BM)
    n_n: tl.constexpr = N // BN
    num_tiles = n_m * n_n
    per_group = 8 * n_n
    for tile_id in tl.range(tl.program_id(0), num_tiles, NUM_SMS, warp_specialize=WS):
        first_m = (tile_id // per_group) * 8
        gm = tl.minimum(n_m - first_m, 8)
        pid_m = first_m + (tile_id % per_group) % gm
        pid_n = (tile_id % per_group) // gm
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(0, K // BK):
            a = a_desc.load([pid_m * BM, ki * BK])
            w = w_desc.load([pid_n * BN, ki * BK])
            acc = tl.dot(a, w.T, acc)
        cols = pid_n * BN + tl.arange(0, BN)
        acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
        if ACT:
            acc = _gelu(acc)
        y_desc.store([pid_m * BM, pid_n * BN], acc.to(y_desc.dtype))


@triton.jit
def stream_tma(x_desc, w0_desc, w1_desc, y_desc, b0_ptr, b1_ptr, M,
               H: tl.constexpr, BM: tl.constexpr, BH: tl.constexpr, NUM_SMS: tl.constexpr,
               PERSIST: tl.constexpr):
    """256 -> H (GELU) -> 256, fused like `stream`: x's four 64-column chunks stay on chip,
    the hidden layer is made BH columns at a time and consumed at once by two 128-column
    output accumulators; every load through a TMA descriptor."""
    n_rb = tl.cdiv(M, BM)
    step = NUM_SMS if PERSIST else n_rb
    for rb in range(tl.program_id(0), n_rb, step):
        off = rb * BM
        x0 = x_desc.load([off, 0])
        x1 = x_desc.load([off, 64])
        x2 = x_desc.load([off, 128])
        x3 = x_desc.load([off, 192])
        acc0 = tl.zeros((BM, 128), dtype=tl.float32)
        acc1 = tl.zeros((BM, 128), dtype=tl.float32)
        for j in range(0, H, BH):
            s = tl.dot(x0, w0_desc.load([j, 0]).T)
            s = tl.dot(x1, w0_desc.load([j, 64]).T, s)
            s = tl.dot(x2, w0_desc.load([j, 128]).T, s)
            s = tl.dot(x3, w0_desc.load([j, 192]).T, s)
            s += tl.load(b0_ptr + j + tl.arange(0, BH)).to(tl.float32)[None, :]
            h = _gelu(s).to(x_desc.dtype)
            acc0 = tl.dot(h, w1_desc.load([0, j]).T, acc0)
            acc1 = tl.dot(h, w1_desc.load([128, j]).T, acc1)
        acc0 += tl.load(b1_ptr + tl.arange(0, 128)).to(tl.float32)[None, :]
        acc1 += tl.load(b1_ptr + 128 + tl.arange(0, 128)).to(tl.float32)[None, :]
        y_desc.store([off, 0], acc0.to(y_desc.dtype))
        y_desc.store([off, 128], acc1.to(y_desc.dtype))


def graphed(fn, n=10):
    """us per call: median do_bench of a CUDA graph of n calls (the interpreter: one call)."""
    fn()
    if INTERP:
        return float("nan")
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n):
            fn()
    return triton.testing.do_bench(g.replay, warmup=50, rep=300, return_mode="median") * 1e3 / n


def load_module(path):
    spec = importlib.util.spec_from_file_location("headline", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def tflops(m, k, n, us):
    return 2 * m * k * n / us / 1e6


def main(out, sizes):
    sms = 4 if INTERP else torch.cuda.get_device_properties(0).multi_processor_count
    triton.set_allocator(lambda size, align, stream: torch.empty(size, device=DEV,
                                                                 dtype=torch.int8))
    F = torch.nn.functional
    dt = torch.float16
    w0 = (torch.randn(512, 256, device=DEV) / 16).to(dt)
    b0 = (torch.randn(512, device=DEV) / 10).to(dt)
    w1 = (torch.randn(256, 512, device=DEV) / 22).to(dt)
    b1 = (torch.randn(256, device=DEV) / 10).to(dt)
    lines = []

    def say(s):
        print(s, flush=True)
        lines.append(s)

    mod = None if INTERP else load_module("tuned/mlp_256x512x256_gelu_fp16.py")
    for M in sizes:
        t_start = time.time()
        x = torch.randn(M, 256, device=DEV).to(dt)
        h32 = F.gelu(F.linear(x.float(), w0.float(), b0.float()))
        ref = F.linear(h32, w1.float(), b1.float())
        hid = torch.empty(M, 512, device=DEV, dtype=dt)
        y = torch.empty(M, 256, device=DEV, dtype=dt)
        # layer inputs/outputs and references for the gemm contenders
        layers = {1: (x, w0, b0, hid, 256, 512, 1, h32),
                  2: (h32.to(dt), w1, b1, y, 512, 256, 0,
                      F.linear(h32.to(dt).float(), w1.float(), b1.float()))}
        if not INTERP:
            say(f"M={M} whole MLP: eager "
                f"{graphed(lambda: F.linear(F.gelu(F.linear(x, w0, b0)), w1, b1)):.1f} us")
            W, B = [w0, w1], [b0, b1]
            mod.mlp(x, W, B)
            plan = next(p for k, p in mod._PLANS.items() if k[1] == M)
            t = graphed(lambda: mod.mlp(x, W, B))
            err = (mod.mlp(x, W, B).float() - ref).abs().max().item()
            say(f"M={M} whole MLP: shipped module ({plan.strategy}) {t:.1f} us err {err:.1e}")
        for L, (a, w, b, dst, K, N, act, r) in layers.items():
            if not INTERP:
                t = graphed(lambda: F.linear(a, w, b))
                say(f"M={M} L{L} cuBLAS linear (no act) {t:.1f} us {tflops(M, K, N, t):.0f} TF/s")
            cands = []
            for bm, bn, bk, wp, st in ((128, 128, 64, 8, 3), (128, 256, 64, 8, 3)):
                grid = (triton.cdiv(M, bm) * (N // bn),)
                cands.append((f"pointer {bm}x{bn}x{bk} w{wp} s{st}",
                               lambda grid=grid, bm=bm, bn=bn, bk=bk, wp=wp, st=st:
                               pointer_tile[grid](a, w, b, dst, M, K, N, bm, bn, bk, act,
                                                  num_warps=wp, num_stages=st)))
            for bm, bn, bk, wp, st in ((128, 128, 64, 8, 3), (128, 256, 64, 8, 3),
                                       (128, 256, 64, 8, 4), (128, 128, 64, 4, 4)):
                descs = (TensorDescriptor.from_tensor(a, [bm, bk]),
                         TensorDescriptor.from_tensor(w, [bn, bk]),
                         TensorDescriptor.from_tensor(dst, [bm, bn]))
                grid = (min(sms, triton.cdiv(M, bm) * (N // bn)),)
                cands.append((f"tma_flat {bm}x{bn}x{bk} w{wp} s{st}",
                              lambda grid=grid, d=descs, bm=bm, bn=bn, bk=bk, wp=wp, st=st:
                              tma_flat[grid](*d, b, M, K, N, bm, bn, bk, act, sms,
                                             num_warps=wp, num_stages=st)))
                for ws in (False, True):
                    cands.append((f"tma_ws{int(ws)} {bm}x{bn}x{bk} w{wp} s{st}",
                                  lambda grid=grid, d=descs, bm=bm, bn=bn, bk=bk, wp=wp, st=st,
                                  ws=ws: tma_ws[grid](*d, b, M, K, N, bm, bn, bk, act, sms, ws,
                                                      num_warps=wp, num_stages=st)))
            for name, run in cands:
                try:
                    t = graphed(run)
                    dst.zero_()
                    run()
                    err = (dst.float() - r).abs().max().item()
                    say(f"M={M} L{L} {name} {t:.1f} us {tflops(M, K, N, t):.0f} TF/s "
                        f"err {err:.1e}")
                except Exception as e:  # a tile that does not fit: say so and go on
                    say(f"M={M} L{L} {name} failed: {type(e).__name__}: "
                        f"{str(e).strip().splitlines()[-1][:100] if str(e).strip() else ''}")
        for bm, bh, wp, st, persist in ((128, 32, 8, 3, 0), (128, 64, 8, 3, 0),
                                        (128, 64, 8, 2, 0), (128, 32, 8, 3, 1),
                                        (128, 64, 8, 3, 1), (64, 64, 4, 3, 0)):
            descs = (TensorDescriptor.from_tensor(x, [bm, 64]),
                     TensorDescriptor.from_tensor(w0, [bh, 64]),
                     TensorDescriptor.from_tensor(w1, [128, bh]),
                     TensorDescriptor.from_tensor(y, [bm, 128]))
            n_rb = triton.cdiv(M, bm)
            grid = (min(sms, n_rb) if persist else n_rb,)
            name = f"stream_tma m{bm} h{bh} w{wp} s{st} persist{persist}"

            def run(grid=grid, d=descs, bm=bm, bh=bh, wp=wp, st=st, persist=persist):
                stream_tma[grid](*d, b0, b1, M, 512, bm, bh, sms, persist,
                                 num_warps=wp, num_stages=st)
            try:
                t = graphed(run)
                y.zero_()
                run()
                err = (y.float() - ref).abs().max().item()
                say(f"M={M} whole MLP: {name} {t:.1f} us {2 * tflops(M, 256, 512, t):.0f} TF/s "
                    f"err {err:.1e}")
            except Exception as e:
                say(f"M={M} whole MLP: {name} failed: {type(e).__name__}: "
                    f"{str(e).strip().splitlines()[-1][:100] if str(e).strip() else ''}")
        say(f"M={M} probe wall {time.time() - t_start:.0f} s")
    open(f"{out}/tma_probe2.log", "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], [int(s) for s in sys.argv[2:]] or [262144, 16384])
