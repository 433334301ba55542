"""Correctness: the one problem generator, the fp32 reference and the one check that every
kernel is held to (the tuner, `mlpgen bench`, a module's self-check).

`check` compares element by element, as torch.testing does: |out - ref| <= atol + rtol * |ref|
for every element, so one wrong row fails at any M (a relative norm over the whole output lets
a few wrong rows of a large M through). Its result names the worst element and its error.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from dataclasses import dataclass, replace

import torch

from mlpgen.activations import ACTIVATIONS
from mlpgen.spec import MLPSpec


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float


# Against the fp32 reference, on random_problem's O(1) outputs. The largest |out - ref| /
# (1 + |ref|) seen, with hidden activations and outputs rounded to the dtype and fp32
# accumulation (the rendered kernels under the interpreter match this rounding model exactly),
# at M up to 262144 and widths up to 1024,4096,1024: fp16 7.2e-4; fp32 dots in tf32, as GPUs
# run them, 1.5e-3 (under the interpreter, plain fp32: 5e-5); bf16 5.5e-3. Each tolerance is
# about four times its largest seen error: accumulation order and activation formulas differ
# between kernels, and larger M reach further into the error's tail.
TOLERANCES = {
    "fp16": Tolerance(rtol=3e-3, atol=3e-3),
    "fp32": Tolerance(rtol=6e-3, atol=6e-3),
    "bf16": Tolerance(rtol=2.5e-2, atol=2.5e-2),
}
# The same table as a bound on rel_error, for tests that summarise a whole output in one figure:
# where every element of an O(1) output is within atol + rtol * |ref|, the relative norm error is
# within about twice rtol.
TOLERANCE = {dtype: 2 * t.rtol for dtype, t in TOLERANCES.items()}
TORCH_DTYPE = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def random_problem(spec: MLPSpec, m: int, device="cpu", seed: int | None = None):
    """Fresh inputs x ~ N(0, 1) and nn.Linear-scaled weights and biases (activations stay O(1)
    through depth), drawn on `device` (large M stays fast on a GPU); a seed makes them
    reproducible on one device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else torch.seed() % 2**31)
    dtype = TORCH_DTYPE[spec.dtype]

    def uniform(*shape, scale):
        return ((torch.rand(*shape, generator=gen, device=device) * 2 - 1) * scale).to(dtype)

    x = torch.randn(m, spec.widths[0], generator=gen, device=device).to(dtype)
    pairs = list(zip(spec.widths[:-1], spec.widths[1:]))
    weights = [uniform(n, k, scale=math.sqrt(3.0 / k)) for k, n in pairs]  # unit-variance outputs
    biases = [uniform(n, scale=0.1) for _, n in pairs] if spec.bias else None
    return x, weights, biases


def reference(spec: MLPSpec, x, weights, biases=None) -> torch.Tensor:
    """The MLP in fp32 from the (upcast) inputs: the ground truth every kernel is held to."""
    h = x.float()
    for i, w in enumerate(weights):
        h = torch.nn.functional.linear(h, w.float(), None if biases is None else biases[i].float())
        act = spec.out_act if i == len(weights) - 1 else spec.act
        h = ACTIVATIONS[act].torch_fn(h)
    return h


@dataclass(frozen=True)
class Check:
    """The verdict of `check`. err: the worst element's |out - ref| / (atol + rtol * |ref|)
    (at most 1 passes; inf for a NaN or Inf, e.g. an element left poisoned, or a wrong shape);
    where: that element's index; got/want: its value and the reference's."""

    ok: bool
    err: float
    where: tuple[int, ...] | None = None
    got: float | None = None
    want: float | None = None
    reason: str = ""  # why it failed, one line; "" when ok


def check(
    out: torch.Tensor, ref: torch.Tensor, dtype: str, scale: float = 1.0, floor: float = 0.0
) -> Check:
    """Compare `out` with the fp32 reference `ref` element-wise within TOLERANCES[dtype], both
    its tolerances times `scale`, or within `floor` where that is larger."""
    if tuple(out.shape) != tuple(ref.shape):
        return Check(
            False, math.inf, reason=f"output shape {tuple(out.shape)}, not {tuple(ref.shape)}"
        )
    if out.numel() == 0:
        return Check(True, 0.0)
    tol = TOLERANCES[dtype]
    ref = ref.float()
    bound = ref.abs().mul_(tol.rtol * scale).add_(tol.atol * scale).clamp_(min=floor)
    ratio = (out.float() - ref).abs_().div_(bound)
    bad = (~torch.isfinite(ratio)).flatten()
    if bad.any():  # the first NaN/Inf (in row order: where a kernel stopped writing)
        flat, err = int(bad.nonzero()[0, 0]), math.inf
    else:
        flat = int(ratio.flatten().argmax())
        err = float(ratio.flatten()[flat])
    where = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), ratio.shape))
    got, want = float(out[where]), float(ref[where])
    if err <= 1.0:
        return Check(True, err, where, got, want)
    what = "NaN/Inf" if math.isinf(err) else f"{err:.3g}x the tolerance"
    reason = f"element {list(where)} is {got:.4g}, expected {want:.4g} ({what})"
    return Check(False, err, where, got, want, reason)


POISON_ROWS = 16  # NaN rows past M that a kernel must leave untouched


def check_run(
    run, spec: MLPSpec, m: int, device="cpu", seed: int | None = None, reference_of=None
) -> Check:
    """Run `run(x, weights, biases, out=...)` once on random_problem(spec, m, device, seed) with
    every allocation poisoned (poisoned_allocations), into a NaN output followed by POISON_ROWS
    NaN rows that must stay untouched, and check what it returns (or, if None, wrote into out)
    against the reference (`reference_of(x, weights, biases)` where given: one kept from an
    earlier check of the same problem)."""
    x, weights, biases = random_problem(spec, m, device, seed)
    with poisoned_allocations():
        buf = torch.full((m + POISON_ROWS, spec.widths[-1]), math.nan, dtype=x.dtype, device=device)
        y = run(x, weights, biases, out=buf[:m])
    y = buf[:m] if y is None else y
    if not torch.isnan(buf[m:]).all():
        return Check(False, math.inf, reason=f"wrote rows past M={m}")
    want = (reference_of or (lambda *p: reference(spec, *p)))(x, weights, biases)
    result = check(y, want, spec.dtype)
    return result if result.ok else replace(result, reason=f"{result.reason} at M={m}")


@contextlib.contextmanager
def poisoned_allocations():
    """Within: every buffer torch allocates uninitialised (torch.empty and its kin: outputs,
    hidden activations, workspaces) is filled with NaN, so an element a kernel fails to write
    cannot pass for a right one left in memory by an earlier run. Buffers allocated zeroed stay
    zero: a kernel may rely on that (split's accumulator)."""
    import torch.utils.deterministic as deterministic

    was = (torch.are_deterministic_algorithms_enabled(), deterministic.fill_uninitialized_memory)
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)  # warn, never refuse an op
    deterministic.fill_uninitialized_memory = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        torch.use_deterministic_algorithms(was[0], warn_only=warn_only)
        deterministic.fill_uninitialized_memory = was[1]


def rel_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref||; inf when out has a NaN or Inf: a summary figure for tests (a
    kernel is judged by `check`)."""
    out = out.float()
    if not torch.isfinite(out).all():
        return math.inf
    denom = ref.norm().item()
    err = (out - ref).norm().item()
    return err / denom if denom > 0 else err
