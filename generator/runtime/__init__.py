"""Launch acceleration for generated modules.

A generated module launches its kernels through triton's public API (`kernel[grid](...)`). Where
mlpgen is installed and this runtime accepts the installed triton, the module hands its calls
to `attach()`'s ModuleRuntime instead: a dict lookup for the call's lane and a direct launch of
the compiled kernel (no JIT dispatch, no argument binding), a C++ lane that does the whole call
in one native function (native_lane.cpp, built on first use), cuBLASLt GEMMs for the layers
without a kernel, and thread-block cluster launches with opted-in shared memory.

The module's training kernels live here too (train.py): rendered per spec into a cache file and
launched for its autograd function and torch.compile op, through these lanes where attached. So
do the cluster strategy's kernels (cluster.py), which only these launches can run: rendered for
a cluster cell when a plan first takes it (kernel_files.py keeps both kinds of file).

These fast lanes touch triton internals, so each declares the triton versions whose internals it
was written against (versions.LANES); on any other triton `unsupported()` says why and the
module stays on the public path (and says so once).
"""

from __future__ import annotations

from mlpgen.runtime.versions import LANES, triton_version, unsupported

__all__ = ["LANES", "attach", "triton_version", "unsupported"]


def attach(namespace: dict):
    """(the runtime of one generated module (its globals), None), or (None, why it has none):
    the module then launches through triton's public API. Under the interpreter, which launches
    by triton's public API anyway, the reason is only a triton the runtime does not know."""
    reason = unsupported("direct")
    if reason is not None or namespace["_INTERPRET"]:
        return None, reason
    from mlpgen.runtime.lanes import ModuleRuntime

    return ModuleRuntime(namespace), None
