"""Session-5 probe 2: where the fused large-batch kernel's time goes, and whether GELU in packed
half precision (f16x2 PTX: 2 elements per instruction, tanh.approx.f16x2) buys it back.
Whole 256 -> 512 (GELU) -> 256 fp16 MLP, us per call (CUDA graph of 10 calls, do_bench median):
eager, the shipped module, and a TMA-fed stream kernel over tiles (BM, BH, warps, stages),
GELU in fp32 (ACT=1, the shipped way) or f16x2 (ACT=2) or none (ACT=0, a bound, wrong on
purpose); the j loop warp-specialised (WS). Plus the layer-1 TMA GEMM with each epilogue.
Errors: relative norm error against the fp32 reference (the project's check), max abs.
python3 .probe/tma_probe3.py OUT [M ...]"""
import os
import sys

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tma_probe2 beside it
from tma_probe2 import DEV, INTERP, _gelu, graphed, load_module  # noqa: E402

INTERP_C = tl.constexpr(INTERP)


@triton.jit
def _gelu_h2(s):
    """GELU of fp32 s, returned in fp16: computed two elements per f16x2 instruction."""
    x = s.to(tl.float16)
    if INTERP_C:
        return _gelu(x.to(tl.float32)).to(tl.float16)
    else:
        return tl.inline_asm_elementwise(
            "{ .reg .b32 c, z, z2, p, t, h;\n"
            "mov.b32 c, 0x39A839A8; mul.rn.f16x2 z, $1, c;\n"
            "mul.rn.f16x2 z2, z, z; mov.b32 c, 0x4A004A00; min.f16x2 z2, z2, c;\n"
            "mov.b32 c, 0x97709770; mov.b32 p, 0x2EAA2EAA; fma.rn.f16x2 p, z2, c, p;\n"
            "mov.b32 c, 0x3C833C83; fma.rn.f16x2 p, p, z2, c; mul.rn.f16x2 p, z, p;\n"
            "tanh.approx.f16x2 t, p; mov.b32 c, 0x38003800; mul.rn.f16x2 h, $1, c;\n"
            "fma.rn.f16x2 $0, h, t, h; }",
            "=r,r", [x], dtype=tl.float16, is_pure=True, pack=2)


@triton.jit
def _act(s, ACT: tl.constexpr):
    if ACT == 1:
        return _gelu(s).to(tl.float16)
    elif ACT == 2:
        return _gelu_h2(s)
    else:
        return s.to(tl.float16)


@triton.jit
def tma_flat(a_desc, w_desc, y_desc, b_ptr, M, K: tl.constexpr, N: tl.constexpr,
             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACT: tl.constexpr,
             NUM_SMS: tl.constexpr):
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
            y_desc.store([pid_m * BM, pid_n * BN], _act(acc, ACT))
            acc = tl.zeros((BM, BN), dtype=tl.float32)


@triton.jit
def stream_tma(x_desc, w0_desc, w1_desc, y_desc, b0_ptr, b1_ptr, M,
               H: tl.constexpr, BM: tl.constexpr, BH: tl.constexpr, ACT: tl.constexpr,
               WS: tl.constexpr):
    off = tl.program_id(0) * BM
    x0 = x_desc.load([off, 0])
    x1 = x_desc.load([off, 64])
    x2 = x_desc.load([off, 128])
    x3 = x_desc.load([off, 192])
    acc0 = tl.zeros((BM, 128), dtype=tl.float32)
    acc1 = tl.zeros((BM, 128), dtype=tl.float32)
    for j in tl.range(0, H, BH, warp_specialize=WS):
        s = tl.dot(x0, w0_desc.load([j, 0]).T)
        s = tl.dot(x1, w0_desc.load([j, 64]).T, s)
        s = tl.dot(x2, w0_desc.load([j, 128]).T, s)
        s = tl.dot(x3, w0_desc.load([j, 192]).T, s)
        s += tl.load(b0_ptr + j + tl.arange(0, BH)).to(tl.float32)[None, :]
        h = _act(s, ACT)
        acc0 = tl.dot(h, w1_desc.load([0, j]).T, acc0)
        acc1 = tl.dot(h, w1_desc.load([128, j]).T, acc1)
    acc0 += tl.load(b1_ptr + tl.arange(0, 128)).to(tl.float32)[None, :]
    acc1 += tl.load(b1_ptr + 128 + tl.arange(0, 128)).to(tl.float32)[None, :]
    y_desc.store([off, 0], acc0.to(y_desc.dtype))
    y_desc.store([off, 128], acc1.to(y_desc.dtype))


def errors(out, ref):
    d = out.float() - ref
    return f"rel {(d.norm() / ref.norm()).item():.1e} max {d.abs().max().item():.1e}"


def main(out, sizes):
    sms = 4 if INTERP else torch.cuda.get_device_properties(0).multi_processor_count
    triton.set_allocator(lambda size, align, stream: torch.empty(size, device=DEV,
                                                                 dtype=torch.int8))
    F = torch.nn.functional
    dt = torch.float16
    g = torch.Generator().manual_seed(0)
    w0 = ((torch.rand(512, 256, generator=g) * 2 - 1) * (3 / 256) ** 0.5).to(DEV, dt)
    b0 = ((torch.rand(512, generator=g) * 2 - 1) * 0.1).to(DEV, dt)
    w1 = ((torch.rand(256, 512, generator=g) * 2 - 1) * (3 / 512) ** 0.5).to(DEV, dt)
    b1 = ((torch.rand(256, generator=g) * 2 - 1) * 0.1).to(DEV, dt)
    lines = []

    def say(s):
        print(s, flush=True)
        lines.append(s)

    mod = None if INTERP else load_module("tuned/mlp_256x512x256_gelu_fp16.py")
    for M in sizes:
        x = torch.randn(M, 256, generator=g).to(DEV, dt)
        lin = F.linear(x.float(), w0.float(), b0.float())
        h32 = F.gelu(lin)
        ref = F.linear(h32, w1.float(), b1.float())
        y = torch.empty(M, 256, device=DEV, dtype=dt)
        hid = torch.empty(M, 512, device=DEV, dtype=dt)
        if not INTERP:
            eager = lambda: F.linear(F.gelu(F.linear(x, w0, b0)), w1, b1)  # noqa: E731
            say(f"M={M} eager {graphed(eager):.1f} us {errors(eager(), ref)}")
            W, B = [w0, w1], [b0, b1]
            mod.mlp(x, W, B)
            plan = next(p for k, p in mod._PLANS.items() if k[1] == M)
            say(f"M={M} shipped module ({plan.strategy} {plan.cfg.get('block_m')}/"
                f"{plan.cfg.get('block_n')}) {graphed(lambda: mod.mlp(x, W, B)):.1f} us "
                f"{errors(mod.mlp(x, W, B), ref)}")
        for act in (0, 1, 2):
            bm, bn, bk = 128, 256, 64
            d = (TensorDescriptor.from_tensor(x, [bm, bk]), TensorDescriptor.from_tensor(w0, [bn, bk]),
                 TensorDescriptor.from_tensor(hid, [bm, bn]))
            grid = (min(sms, triton.cdiv(M, bm) * (512 // bn)),)

            def run():
                tma_flat[grid](*d, b0, M, 256, 512, bm, bn, bk, act, sms, num_warps=8,
                               num_stages=3)
            try:
                t = graphed(run)
                run()
                say(f"M={M} L1 tma_flat 128x256x64 w8 s3 act{act} {t:.1f} us "
                    f"{errors(hid, h32 if act else lin)}")
            except Exception as e:
                say(f"M={M} L1 tma_flat act{act} failed: {type(e).__name__}: "
                    f"{str(e).strip().splitlines()[-1][:100] if str(e).strip() else ''}")
        for bm, bh, wp, st, ws in ((128, 64, 8, 2, 0), (128, 32, 8, 2, 0), (128, 32, 8, 3, 0),
                                   (64, 32, 4, 2, 0), (64, 64, 4, 2, 0), (64, 32, 4, 3, 0),
                                   (128, 64, 8, 2, 1), (64, 64, 4, 2, 1)):
            d = (TensorDescriptor.from_tensor(x, [bm, 64]), TensorDescriptor.from_tensor(w0, [bh, 64]),
                 TensorDescriptor.from_tensor(w1, [128, bh]), TensorDescriptor.from_tensor(y, [bm, 128]))
            for act in ((1, 2) if ws or bm == 64 and bh == 64 else (0, 1, 2)):
                name = f"stream_tma m{bm} h{bh} w{wp} s{st} ws{ws} act{act}"

                def run(d=d, bm=bm, bh=bh, wp=wp, st=st, ws=ws, act=act):
                    stream_tma[(triton.cdiv(M, bm),)](*d, b0, b1, M, 512, bm, bh, act, ws,
                                                      num_warps=wp, num_stages=st)
                try:
                    t = graphed(run)
                    y.zero_()
                    run()
                    say(f"M={M} {name} {t:.1f} us {errors(y, ref)}")
                except Exception as e:
                    say(f"M={M} {name} failed: {type(e).__name__}: "
                        f"{str(e).strip().splitlines()[-1][:100] if str(e).strip() else ''}")
    open(f"{out}/tma_probe3.log", "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], [int(s) for s in sys.argv[2:]] or [262144, 16384, 4096])
