"""Compile gluon_mlp.fused_mlp_ws for sm_90a on a machine without a GPU, with the triton the
H200 has (3.6: `pip install triton==3.6.0 torch==2.13.0` in a separate venv), and report what
ptxas says: shared memory, spills, registers, and C7513 (ptxas serialising every wgmma, which an
A operand packed in registers while other wgmmas were in flight caused in the first draft).
Each config as run on the H200: python compile_sm90.py (GLUON_MLP_PART / GLUON_MLP_XREG as there).
"""

import re
import subprocess
import sys
from pathlib import Path

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime.jit import mangle_type

sys.path.insert(0, str(Path(__file__).parent))
import gluon_mlp as g  # noqa: E402

PTXAS = Path(triton.__file__).parent / "backends/nvidia/bin/ptxas"
CONFIGS = [(64, 2, 240, 24, 0), (64, 2, 240, 24, 1), (32, 3, 240, 24, 0), (32, 4, 240, 24, 1)]


def compile_one(bn1, stages, regs, lregs, pp, bm=64):
    """(shared bytes, ptxas -v lines) of one config, compiled for sm_90a."""
    m, k0, n1, n2 = 4096, 256, 512, 256
    x = torch.empty(m, k0, dtype=torch.float16)
    w1 = torch.empty(n1, k0, dtype=torch.float16)
    w2 = torch.empty(n2, n1, dtype=torch.float16)

    def desc(t, block):
        return TensorDescriptor.from_tensor(
            t, block, gl.NVMMASharedLayout.get_default_for(block, gl.float16)
        )

    vals = dict(x_desc=desc(x, [bm, 64]), w1_desc=desc(w1, [bn1, 64]),
                w2_desc=desc(w2, [n2, bn1]), b0_ptr=x, b1_ptr=x, y_ptr=x, M=m)
    consts = dict(BM=bm, BN1=bn1, K0=k0, N1=n1, N2=n2, STAGES=stages, CONSUMER_REGS=regs,
                  LOADER_REGS=lregs, PINGPONG=pp)
    fn = g.fused_mlp_ws
    sig = {n: "constexpr" if n in consts else mangle_type(vals[n]) for n in fn.arg_names}
    src = GluonASTSource(fn, sig, {(fn.arg_names.index(k),): v for k, v in consts.items()})
    kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                            options=dict(num_warps=4, maxnreg=168))
    ptx = Path("/tmp/gluon_mlp.ptx")
    ptx.write_text(kernel.asm["ptx"])
    out = subprocess.run([str(PTXAS), "-arch=sm_90a", "-v", str(ptx), "-o", "/tmp/gluon_mlp.cubin"],
                         capture_output=True, text=True).stderr
    keep = [ln.strip() for ln in out.splitlines() if re.search("spill|C7513|Used", ln)]
    return kernel.metadata.shared, keep


if __name__ == "__main__":
    for cfg in CONFIGS:
        try:
            shared, lines = compile_one(*cfg)
            print(cfg, f"shared={shared}", " | ".join(lines))
        except Exception as e:  # noqa: BLE001
            print(cfg, "FAIL", str(e).splitlines()[-1][:200])
