"""What holds the layered GEMM back at large M: the same Triton GEMM (256->512, 128x128x64 tile,
8 warps, 3 stages) with no activation, with erf GELU, and cuBLAS's linear alone. do_bench median
of CUDA-graph replays of 10 calls, per call."""
import sys, importlib.util
import torch
from triton.testing import do_bench
spec = importlib.util.spec_from_file_location("lp", ".probe/layered_probe.py")
lp = importlib.util.module_from_spec(spec); spec.loader.exec_module(lp)
dev = "cuda"
w1 = (torch.randn(512, 256, device=dev) / 16).half(); b1 = (torch.randn(512, device=dev) / 10).half()
lines = []

def graphed(fn, n=10):
    """GPU us per call: do_bench median of a CUDA graph of n calls (no host launch cost)."""
    fn(); torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n):
            fn()
    return do_bench(g.replay, warmup=50, rep=300, return_mode="median") * 1e3 / n

for M in (16384, 262144):
    x = torch.randn(M, 256, device=dev).half()
    cfg = (128, 128, 64, 8, 3, 8)
    y = torch.empty(M, 512, device=dev, dtype=torch.float16)
    grid = (M // 128 * 4,)
    def tri(act):
        lp.gemm_gelu[grid](x, w1, b1, y, M, 256, 512, 128, 128, 64, 8, act, num_warps=8, num_stages=3)
    tri(True); tri(False)
    t_act = graphed(lambda: tri(True))
    t_none = graphed(lambda: tri(False))
    t_cub = graphed(lambda: torch.nn.functional.linear(x, w1, b1))
    f = 2 * M * 256 * 512 / 1e6
    lines.append(f"M={M}: triton gemm+bias {t_none:.1f} us ({f/t_none:.0f} TFLOP/s), +erf gelu {t_act:.1f} us, cuBLAS linear {t_cub:.1f} us ({f/t_cub:.0f} TFLOP/s)")
    print(lines[-1], flush=True)
open(sys.argv[1] + "/layered_act.log", "w").write("\n".join(lines) + "\n")
