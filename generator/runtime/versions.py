"""The triton releases whose internals each of mlpgen.runtime's fast lanes was written against,
and the gates that keep a lane off any other triton (the generated module then launches through
triton's public API): the version, and the digest of the launcher whose C launch is called
directly."""

from __future__ import annotations

import hashlib
import inspect
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

# sha256 of triton 3.6's CudaLauncher.__call__ source without whitespace: it only adds
# (cooperative grid, PDL, global scratch, profile scratch) before its arguments and calls the
# C launch; a lane whose launcher has this source and no scratch calls the C launch itself
LAUNCHER_CALL_DIGEST = "0ff2b3219ec9f5067def7f5b72cf4ed0f1b544e98655c5e548c7e933e3ab3a19"
_DIRECT: dict[type, bool] = {}  # launcher class -> whether its __call__ is the one above


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


def direct_launch(run):
    """(what a lane calls, what it passes between the kernel's function handle and its
    metadata): triton's C launch where `run` (a compiled kernel's launcher) is the verified one
    and needs no scratch, else `run` itself."""
    kind = type(run)
    if kind not in _DIRECT:
        try:
            text = "".join(inspect.getsource(kind.__call__).split())
        except (OSError, TypeError, AttributeError):  # no source: a C class, a frozen install
            text = ""
        _DIRECT[kind] = hashlib.sha256(text.encode()).hexdigest() == LAUNCHER_CALL_DIGEST
    if _DIRECT[kind] and not run.global_scratch_size and not run.profile_scratch_size:
        return run.launch, (run.launch_cooperative_grid, run.launch_pdl, None, None)
    return run, ()
