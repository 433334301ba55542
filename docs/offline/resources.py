"""Compile kernels for sm_90a on a machine without a GPU and report what the binaries use.

Triton compiles for a GPU target it is told about; its wheel carries ptxas and cuobjdump.
    TRITON_DEFAULT_FP_FUSION=1 python docs/offline/resources.py
prints, per kernel: HGMMA (wgmma) and HMMA (mma.sync) instructions in the SASS, local-memory
loads/stores (LDL/STL: register spills), shared memory and cuobjdump's resource usage.
Triton versions differ in register allocation: these are triton 3.9's binaries, not 3.6's.
"""

import importlib.util
import pathlib
import subprocess
import tempfile

import triton
from triton.backends.compiler import GPUTarget

from mlpgen.render import render_kernel
from mlpgen.spec import KernelConfig as K
from mlpgen.spec import MLPSpec

BIN = pathlib.Path(triton.__file__).parent / "backends/nvidia/bin"
RUNS = [
    (
        MLPSpec((256, 512, 256), act="gelu"),
        [
            K("stream", block_m=128, block_n=32, chunk=64, num_warps=8, num_stages=3),
            K("stream", block_m=16, block_n=64, chunk=64, num_warps=8, num_stages=3),
            K("persist", block_m=128, block_n=128, block_k=64, num_warps=8, num_stages=3),
            K("persist", block_m=128, block_n=256, block_k=64, num_warps=8, num_stages=3),
            K("persist", block_m=16, block_n=32, block_k=64, num_warps=4, num_stages=3),
            K("rowblock", block_m=16, chunk=128, num_warps=8),
            K("rowblock", block_m=64, chunk=64, num_warps=8),
            K("rowblock", block_m=128, chunk=64, num_warps=8),
        ],
    ),
    (MLPSpec((64, 64, 64, 64, 64, 3), act="relu"), [K("rowblock", block_m=64, chunk=64, num_warps=8)]),
]

for spec, configs in RUNS:
    for cfg in configs:
        d = pathlib.Path(tempfile.mkdtemp())
        f = d / "k.py"
        f.write_text("import triton\nimport triton.language as tl\n\n" + render_kernel(spec, cfg))
        s = importlib.util.spec_from_file_location("k", f)
        m = importlib.util.module_from_spec(s)
        s.loader.exec_module(m)
        fn = getattr(m, cfg.kernel_name)
        sig = {
            n: ("*i32" if n == "sync_ptr" else "*fp16" if n.endswith("ptr") else "i32")
            for n in fn.arg_names
        }
        k = triton.compile(
            triton.compiler.ASTSource(fn, sig, {}),
            target=GPUTarget("cuda", 90, 32),
            options={"num_warps": cfg.num_warps, "num_stages": cfg.num_stages},
        )
        (d / "k.cubin").write_bytes(k.asm["cubin"])
        res = subprocess.run([BIN / "cuobjdump", "-res-usage", d / "k.cubin"], capture_output=True, text=True)
        usage = next((line.strip() for line in res.stdout.splitlines() if "REG" in line), "?")
        sass = subprocess.run([BIN / "cuobjdump", "-sass", d / "k.cubin"], capture_output=True, text=True).stdout
        print(
            f"{spec.name[:22]:22s} {cfg.kernel_name:26s} w{cfg.num_warps} "
            f"HGMMA={sass.count('HGMMA')} HMMA={sass.count('HMMA')} LDL={sass.count('LDL')} "
            f"STL={sass.count('STL')} smem={k.metadata.shared} {' '.join(usage.split()[:2])}"
        )
