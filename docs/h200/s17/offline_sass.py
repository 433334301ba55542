"""Session 17: compile one kernel of a rendered module for sm_90a on a machine without a GPU
(this machine's triton, 3.9, and its ptxas; the H200 has triton 3.6) and report what ptxas says
(registers, spills), how many of the kernel's global loads (LDG) come before its first
BAR.SYNC, and the SASS lines matching a pattern. The register counts and load counts quoted in
BENCHMARKS.md's seventeenth session and space.cluster_reason come from this. Run from the
repository root: python3 docs/h200/s17/offline_sass.py MODULE.py KERNEL WARPS [PATTERN]
(e.g. tuned/mlp_256x512x256_gelu_fp16.py _k_cluster_m1_c32_k128 4 "LDG|BAR.SYNC")."""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


def main(path, name, warps, pattern=None):
    spec = importlib.util.spec_from_file_location("offline_module", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = mod.KERNELS.get(name) or getattr(mod, name)
    sig = {a: ("i32" if a == "M" else "*fp16") for a in fn.arg_names}
    attrs = {(i,): [["tt.divisibility", 16]] for i, a in enumerate(fn.arg_names) if a != "M"}
    kernel = triton.compile(ASTSource(fn, sig, {}, attrs), target=GPUTarget("cuda", 90, 32),
                            options=dict(num_warps=warps, num_stages=1))
    ptx, cubin = Path("/tmp/offline_sass.ptx"), Path("/tmp/offline_sass.cubin")
    ptx.write_text(kernel.asm["ptx"])
    bin_dir = Path(triton.__file__).parent / "backends/nvidia/bin"
    ptxas = next(p for p in (bin_dir / "ptxas-blackwell", bin_dir / "ptxas") if p.exists())
    info = subprocess.run([str(ptxas), "-v", "--gpu-name", "sm_90a", str(ptx), "-o", str(cubin)],
                          capture_output=True, text=True).stderr
    print(" | ".join(ln.strip() for ln in info.splitlines() if re.search("spill|Used", ln)))
    sass = subprocess.run([str(bin_dir / "cuobjdump"), "--dump-sass", str(cubin)],
                          capture_output=True, text=True).stdout.splitlines()
    first_bar = next((i for i, ln in enumerate(sass) if "BAR.SYNC" in ln), len(sass))
    loads = [i for i, ln in enumerate(sass) if "LDG" in ln]
    print(f"global loads before the first BAR.SYNC: {sum(i < first_bar for i in loads)}"
          f" of {len(loads)}")
    for ln in sass:
        if pattern and re.search(pattern, ln):
            print(ln.strip()[:110])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)
