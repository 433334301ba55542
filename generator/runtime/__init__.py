"""Launch acceleration for generated modules.

A generated module launches its kernels through triton's public API (`kernel[grid](...)`). Where
mlpgen is installed and this runtime accepts the installed triton, the module hands its calls
to `attach()`'s ModuleRuntime instead: a dict lookup for the call's lane and a direct launch of
the compiled kernel (no JIT dispatch, no argument binding), a C++ lane that does the whole call
in one native function (native_lane.cpp, built on first use), cuBLASLt GEMMs for the layers
without a kernel, and thread-block cluster launches with opted-in shared memory.

The module's training kernels live here too (train.py): rendered per spec into a cache file and
launched for its autograd function and torch.compile op, through these lanes where attached.

These fast lanes touch triton internals, so each declares the triton versions whose internals it
was written against (LANES); on any other triton `unsupported()` says why and the module stays
on the public path (and says so once).
"""

from __future__ import annotations

import re

import triton

# lane -> the triton (major, minor) releases whose internals it uses:
#   direct:  CompiledKernel.run / .function / .packed_metadata and CudaLauncher.__call__, whose
#            source is also checked by digest before its C launch is called directly
#   native:  the C launch's argument order and metadata, which native_lane.cpp repeats
#   cluster: the (num_warps, num_ctas, shared) launch metadata that a cluster launch rewrites
LANES: dict[str, tuple[tuple[int, int], ...]] = {
    "direct": ((3, 6),),
    "native": ((3, 6),),
    "cluster": ((3, 6),),
}


def triton_version(text: str | None = None) -> tuple[int, int] | None:
    """(major, minor) of a triton version string (default: the installed triton), or None."""
    found = re.match(r"(\d+)\.(\d+)", text if text is not None else triton.__version__)
    return (int(found[1]), int(found[2])) if found else None


def unsupported(lane: str = "direct", version: str | None = None) -> str | None:
    """None where `lane` supports the triton `version` (default: the installed one), else the
    reason it does not, as one sentence fragment."""
    if lane not in LANES:
        raise ValueError(f"unknown lane {lane!r}; lanes: {', '.join(LANES)}")
    text = version if version is not None else triton.__version__
    have = triton_version(text)
    if have in LANES[lane]:
        return None
    known = ", ".join(f"{a}.{b}" for a, b in LANES[lane])
    return f"mlpgen.runtime's {lane} launch supports triton {known}, not {text}"


def attach(namespace: dict):
    """The runtime of one generated module (its globals), or a string saying why it has none:
    the module then launches through triton's public API."""
    reason = unsupported("direct")
    if reason is not None:
        return reason
    from mlpgen.runtime.lanes import ModuleRuntime

    return ModuleRuntime(namespace)
