"""Session-5 probe 3: the TMA-fed stream kernel (f16x2 GELU) with its descriptors made on the
host (TensorDescriptor arguments, encoded by the launcher at every call) or in the kernel
(tl.make_tensor_descriptor: global scratch from triton's allocator, one set per program), the
latter also persistent (a grid of SMs looping over row blocks). 256 -> 512 (GELU) -> 256 fp16.
us per call: GPU (CUDA graph of 10 calls, do_bench median) and host (loops of 200
kernel[grid] calls then one sync, min of 10). Errors: relative norm error vs fp32 reference.
python3 .probe/tma_probe4.py OUT [M ...]"""
import os
import sys
import time

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tma_probe2 beside it
from tma_probe2 import DEV, INTERP, graphed, load_module  # noqa: E402
from tma_probe3 import _act, errors, stream_tma  # noqa: E402


@triton.jit
def stream_dev(x_ptr, w0_ptr, w1_ptr, y_ptr, b0_ptr, b1_ptr, M,
               H: tl.constexpr, BM: tl.constexpr, BH: tl.constexpr, ACT: tl.constexpr,
               NUM_SMS: tl.constexpr, PERSIST: tl.constexpr):
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[M, 256], strides=[256, 1], block_shape=[BM, 64])
    w0_desc = tl.make_tensor_descriptor(w0_ptr, shape=[H, 256], strides=[256, 1], block_shape=[BH, 64])
    w1_desc = tl.make_tensor_descriptor(w1_ptr, shape=[256, H], strides=[H, 1], block_shape=[128, BH])
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[M, 256], strides=[256, 1], block_shape=[BM, 128])
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
            h = _act(s, ACT)
            acc0 = tl.dot(h, w1_desc.load([0, j]).T, acc0)
            acc1 = tl.dot(h, w1_desc.load([128, j]).T, acc1)
        acc0 += tl.load(b1_ptr + tl.arange(0, 128)).to(tl.float32)[None, :]
        acc1 += tl.load(b1_ptr + 128 + tl.arange(0, 128)).to(tl.float32)[None, :]
        y_desc.store([off, 0], acc0.to(y_desc.dtype))
        y_desc.store([off, 128], acc1.to(y_desc.dtype))


def host_us(fn, n=200, loops=10):
    for _ in range(20):
        fn()
    if INTERP:
        return float("nan")
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(loops):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best


def main(out, sizes):
    sms = 4 if INTERP else torch.cuda.get_device_properties(0).multi_processor_count
    triton.set_allocator(lambda size, align, stream: torch.empty(size, device=DEV, dtype=torch.int8))
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
        ref = F.linear(F.gelu(F.linear(x.float(), w0.float(), b0.float())), w1.float(), b1.float())
        y = torch.empty(M, 256, device=DEV, dtype=dt)
        if not INTERP:
            eager = lambda: F.linear(F.gelu(F.linear(x, w0, b0)), w1, b1)  # noqa: E731
            say(f"M={M} eager gpu {graphed(eager):.1f} host {host_us(eager):.1f}")
            W, B = [w0, w1], [b0, b1]
            call = lambda: mod.mlp(x, W, B)  # noqa: E731
            call()
            say(f"M={M} shipped module gpu {graphed(call):.1f} host {host_us(call):.1f}")
        for bm, bh, wp, st in ((128, 64, 8, 2), (128, 32, 8, 2), (64, 32, 4, 2)):
            n_rb = triton.cdiv(M, bm)

            def host_desc(bm=bm, bh=bh, wp=wp, st=st):
                d = (TensorDescriptor.from_tensor(x, [bm, 64]), TensorDescriptor.from_tensor(w0, [bh, 64]),
                     TensorDescriptor.from_tensor(w1, [128, bh]), TensorDescriptor.from_tensor(y, [bm, 128]))
                stream_tma[(n_rb,)](*d, b0, b1, M, 512, bm, bh, 2, False, num_warps=wp, num_stages=st)

            def dev_desc(bm=bm, bh=bh, wp=wp, st=st, persist=False):
                grid = (min(sms, n_rb) if persist else n_rb,)
                stream_dev[grid](x, w0, w1, y, b0, b1, M, 512, bm, bh, 2, sms, persist,
                                 num_warps=wp, num_stages=st)
            for name, run in (("host descriptors", host_desc), ("kernel descriptors", dev_desc),
                              ("kernel descriptors, persistent", lambda f=dev_desc: f(persist=True))):
                try:
                    t = graphed(run)
                    h = host_us(run)
                    y.zero_()
                    run()
                    say(f"M={M} stream_tma m{bm} h{bh} w{wp} s{st} {name}: gpu {t:.1f} host {h:.1f} "
                        f"{errors(y, ref)}")
                except Exception as e:
                    say(f"M={M} m{bm} h{bh} {name} failed: {type(e).__name__}: "
                        f"{str(e).strip().splitlines()[-1][:100] if str(e).strip() else ''}")
    open(f"{out}/tma_probe4.log", "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], [int(s) for s in sys.argv[2:]] or [262144, 65536, 16384])
