"""Session 6 probe: stream_tma with the next hidden slice's first-layer MMA issued before this
slice's activation (a one-slice lookahead, FlashAttention-3's intra-warpgroup overlap), so the
tensor cores can run it while the CUDA cores compute GELU. Headline spec (256 -> 512 -> 256,
gelu, fp16), hand-written from the rendered stream_tma kernel; against the module's own kernel
(the shipped tile), each checked against the fp32 reference and timed (CUDA-graph replay).
Run from the repository root: python3 docs/h200/s6/lookahead_probe.py OUT"""

import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

from mlpgen.emit import entry
from mlpgen.measure import candidate_module, device_problem, gpu_us
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import reference, rel_error

out = Path(sys.argv[1])
work = out / "work"
work.mkdir(parents=True, exist_ok=True)
spec = MLPSpec(widths=(256, 512, 256), act="gelu", dtype="fp16")
shipped = KernelConfig("stream_tma", block_m=128, block_n=64, chunk=128, num_warps=8, num_stages=2)
mod = candidate_module(spec, shipped, work)
_gelu_f16 = mod._gelu_f16  # the module's packed GELU (a JITFunction), called from the kernel
triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device="cuda"))


@triton.jit
def lookahead(x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, M,
              BM: tl.constexpr, BN: tl.constexpr, KC: tl.constexpr, NC: tl.constexpr):
    K: tl.constexpr = 256
    N1: tl.constexpr = 512
    N2: tl.constexpr = 256
    x_desc = tl.make_tensor_descriptor(x_ptr, [M, K], [K, 1], [BM, KC])
    w0_desc = tl.make_tensor_descriptor(w0_ptr, [N1, K], [K, 1], [BN, KC])
    w1_desc = tl.make_tensor_descriptor(w1_ptr, [N2, N1], [N1, 1], [NC, BN])
    y_desc = tl.make_tensor_descriptor(y_ptr, [M, N2], [N2, 1], [BM, NC])
    for block in range(tl.program_id(0), tl.cdiv(M, BM), tl.num_programs(0)):
        row = block * BM
        x_0 = x_desc.load([row, 0])
        x_1 = x_desc.load([row, KC])
        acc_0 = tl.zeros((BM, NC), dtype=tl.float32)
        acc_1 = tl.zeros((BM, NC), dtype=tl.float32)
        s = tl.dot(x_0, w0_desc.load([0, 0]).T)
        s = tl.dot(x_1, w0_desc.load([0, KC]).T, s)
        for j in range(0, N1 - BN, BN):
            t = tl.dot(x_0, w0_desc.load([j + BN, 0]).T)  # the next slice, issued first
            t = tl.dot(x_1, w0_desc.load([j + BN, KC]).T, t)
            hid = j + tl.arange(0, BN)
            s += tl.load(b0_ptr + hid).to(tl.float32)[None, :]
            h = _gelu_f16(s)
            acc_0 = tl.dot(h, w1_desc.load([0, j]).T, acc_0)
            acc_1 = tl.dot(h, w1_desc.load([NC, j]).T, acc_1)
            s = t
        hid = (N1 - BN) + tl.arange(0, BN)
        s += tl.load(b0_ptr + hid).to(tl.float32)[None, :]
        h = _gelu_f16(s)
        acc_0 = tl.dot(h, w1_desc.load([0, N1 - BN]).T, acc_0)
        acc_1 = tl.dot(h, w1_desc.load([NC, N1 - BN]).T, acc_1)
        n_idx = tl.arange(0, NC)
        acc_0 += tl.load(b1_ptr + n_idx).to(tl.float32)[None, :]
        y_desc.store([row, 0], acc_0.to(tl.float16))
        acc_1 += tl.load(b1_ptr + NC + n_idx).to(tl.float32)[None, :]
        y_desc.store([row, NC], acc_1.to(tl.float16))


log = open(out / "lookahead_probe.log", "w")


def say(text):
    print(text, flush=True)
    log.write(text + "\n")


sms = torch.cuda.get_device_properties(0).multi_processor_count
variants = [("lookahead", bn, w, s) for bn, w, s in ((64, 8, 2), (32, 8, 2), (32, 8, 3), (64, 8, 3))]
say(f"{'M':>7} {'kernel':<32} {'us':>8} {'vs shipped':>10} {'regs':>5} {'spill':>5} {'err':>8}")
for m in (16384, 65536, 262144):
    x, weights, biases = device_problem(spec, m, "cuda", seed=m)
    ref = reference(spec, x, weights, biases)
    plan = mod._Plan(entry(shipped), m, x)
    y = mod._execute(plan, x, weights, biases)
    base = gpu_us(lambda: mod._execute(plan, x, weights, biases))
    c = next(iter(mod._COMPILED.values()))
    say(f"{m:>7} {'shipped m128 n64 c128 w8 s2':<32} {base:8.1f} {1.0:10.3f} {c.n_regs:>5} {c.n_spills:>5} {rel_error(y, ref):8.1e}")
    for name, bn, w, s in variants:
        grid = (min(triton.cdiv(m, 128), sms),)
        y = torch.empty_like(ref, dtype=x.dtype)

        def run():
            return lookahead[grid](x, y, weights[0], biases[0], weights[1], biases[1], m,
                                   BM=128, BN=bn, KC=128, NC=128, num_warps=w, num_stages=s)

        try:
            k = run()
            torch.cuda.synchronize()
            err = rel_error(y, ref)
            us = gpu_us(run)
            say(f"{m:>7} {f'{name} m128 n{bn} c128 w{w} s{s}':<32} {us:8.1f} {us / base:10.3f} {k.n_regs:>5} {k.n_spills:>5} {err:8.1e}")
        except Exception as e:
            say(f"{m:>7} {name} n{bn} w{w} s{s}: {type(e).__name__}: {str(e).splitlines()[0][:100]}")
