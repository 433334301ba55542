"""The native training lane: a module's training step for (device, M, whether x needs a
gradient) as the Python lane ran it once, recorded launch by launch, and from then on run by
native_lane.cpp's `train` (allocations, launches and the autograd node in C++, no interpreter
between a call and its kernels).

A Recording collects the (kernel, grid, args) of one step's forward and backward; `program`
names each tensor argument by its role: x, y, dL/dy, dx, the flat parameter gradient, a
parameter, or a buffer the step allocated (its bytes, and when it lives: SAVED, SCRATCH or
IN_BACKWARD); integers stay as recorded (M, the row split and split_k's ranges are fixed for
M). `register` adds the program's compiled kernels to the extension. A step whose forward is the
module's inference lane (a recomputing config) records the backward only and names that lane.
The lane is on unless MLPGEN_NATIVE_TRAIN=0."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import torch

from mlpgen.runtime import native

FIXED, X, Y, GY, DX, FLAT, BUFFER = -1, -2, -3, -4, -5, -6, -16
# when a buffer lives (native_lane.cpp's BufferKind): allocated by the forward and saved for the
# backward, the forward's own (split_k's workspace), or allocated by the backward
SAVED, SCRATCH, IN_BACKWARD = 0, 1, 2
ATTEMPTS = 3  # recordings a (device, M, need_x) gets before the Python lane keeps it


def enabled() -> bool:
    return os.environ.get("MLPGEN_NATIVE_TRAIN") != "0"


def describe(t: torch.Tensor) -> tuple:
    """(address, whether a buffer of its bytes may stand in for it: contiguous and its own
    storage from the start, those bytes, its dtype): what a recording keeps of a tensor (holding
    the tensor would tie y to its own autograd node)."""
    whole = t._base is None and t.storage_offset() == 0 and t.is_contiguous()
    return t.data_ptr(), whole, t.untyped_storage().nbytes(), t.dtype


@dataclass
class Recording:
    """One training step's launches, (kernel, grid, args, caller) each with every tensor
    argument described (describe), as the Python lane made them; and the step's tensors
    (described): x, y, params, saved (what the forward saved), then gy, dx (None where x needs
    no gradient) and flat."""

    key: tuple  # (device, M, need_x)
    cfg: dict
    by_inference: bool
    forward: list = field(default_factory=list)
    backward: list = field(default_factory=list)
    tensors: dict = field(default_factory=dict)

    def wrap(self, launch, phase: list):
        """`launch`, recording each call into `phase` (self.forward or self.backward)."""

        def record(kernel, grid, args, caller):
            args_seen = [describe(a) if isinstance(a, torch.Tensor) else a for a in args]
            phase.append((kernel, tuple(grid), args_seen, caller))
            return launch(kernel, grid, args, caller)

        return record

    def note(self, **tensors) -> None:
        """Describe the step's tensors (None stays None; a list, each of its tensors)."""
        for k, v in tensors.items():
            if isinstance(v, (list, tuple)):
                self.tensors[k] = [describe(t) for t in v]
            else:
                self.tensors[k] = None if v is None else describe(v)


@dataclass
class Program:
    """A recorded step with every tensor argument named by its role (FIXED: an integer)."""

    forward: list  # (kernel, grid, [(role, value)], caller)
    backward: list
    buffers: list  # (bytes, when it lives: SAVED, SCRATCH or IN_BACKWARD, the dtype it holds)
    saves_y: bool
    by_inference: bool


def program(rec: Recording) -> Program | None:
    """The roles of rec's arguments, or None where one is not a role the lane can fill (a view
    into another tensor, two roles at one address, a tensor larger than the named one at its
    address)."""
    t = rec.tensors
    roles: dict[int, int] = {}
    named: dict[int, int] = {}  # the bytes of each named (not buffer) role's tensor, by address
    buffers: list[tuple] = []

    def name(described, role) -> bool:
        ptr = described[0]
        if roles.get(ptr, role) != role:
            return False
        roles[ptr], named[ptr] = role, described[2]
        return True

    def buffer(described, kind: int) -> bool:
        ptr, whole, nbytes, dtype = described
        if not whole:
            return False
        roles[ptr] = BUFFER - len(buffers)
        buffers.append((nbytes, kind, dtype))
        return True

    if not (name(t["x"], X) and name(t["y"], Y)):
        return None
    if not all(name(p, i) for i, p in enumerate(t["params"])):
        return None
    saves_y = False
    for s in t["saved"]:
        if s[0] == t["y"][0]:
            saves_y = True
        elif s[0] not in roles and not buffer(s, SAVED):
            return None

    def bind(launches, kind: int):
        out = []
        for kernel, grid, args, caller in launches:
            bound = []
            for a in args:
                if not isinstance(a, tuple):  # an integer
                    bound.append((FIXED, a))
                    continue
                # a tensor of no role yet: a buffer of this pass
                if a[0] not in roles and not buffer(a, kind):
                    return None
                role = roles[a[0]]
                if a[0] in named and a[2] > named[a[0]]:
                    return None  # a freed tensor's memory, now a smaller named one's
                if role <= BUFFER:  # memory a freed one had may hold a larger tensor later
                    nbytes, lives, dtype = buffers[BUFFER - role]
                    buffers[BUFFER - role] = (max(nbytes, a[2]), lives, dtype)
                bound.append((role, 0))
            out.append((kernel, grid, bound, caller))
        return out

    saved = set(roles)
    forward = bind(rec.forward, SCRATCH)
    # the forward's own buffers are free once it returns: the backward's tensors may take their
    # memory, and are given roles of their own
    for ptr in set(roles) - saved:
        del roles[ptr]
    if not name(t["gy"], GY) or not name(t["flat"], FLAT):
        return None
    if t["dx"] is not None and not name(t["dx"], DX):
        return None
    backward = bind(rec.backward, IN_BACKWARD)
    if forward is None or backward is None or (rec.by_inference and forward):
        return None
    return Program(forward, backward, buffers, saves_y, rec.by_inference)


def register(rt, rec: Recording) -> bool:
    """Give the extension rec's program for its (device, M, need_x); False where the lane
    cannot run it (no extension, a kernel not launched by the verified C launch or compiled
    for misaligned caller tensors, a recomputing step's M without an inference lane)."""
    prog = program(rec)
    module, state = native.state_of(rt)
    if prog is None or module is None:
        return False
    device, m, need_x = rec.key
    if prog.by_inference and m not in rt.native_rows():
        return False
    warps, stages = rec.cfg["num_warps"], rec.cfg["num_stages"]
    launches = []
    for part in (prog.forward, prog.backward):
        launches.append([])
        for kernel, grid, bound, caller in part:
            args = [v for _, v in bound]
            aligned = (True,) * caller  # the lane's caller tensors are 16-byte aligned
            compiled = rt.compiled.get((kernel, device, warps, stages, False, *aligned))
            roles = [r for r, _ in bound]
            found = compiled and native.launch_of(compiled, [*args, *kernel[1]], roles)
            if found is None:
                return False
            function, nwarps, shared, ctas, coop, pdl, sources, values = found
            launches[-1].append(
                (function, grid[0], grid[1], nwarps, shared, ctas, coop, pdl, sources, values)
            )
    buffers = [(nbytes, kind) for nbytes, kind, _ in prog.buffers]
    module.train_add(state, device, m, need_x, prog.by_inference, prog.saves_y, *launches, buffers)
    return True
