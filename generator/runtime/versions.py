"""The triton releases whose internals each of mlpgen.runtime's fast lanes was written against,
and the gate that keeps a lane off any other triton (the generated module then launches through
triton's public API)."""

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
