"""`mlpgen bench --train`: a training step of the MLP alone, per contender.

One step is the forward, the loss `y.float().square().mean()` and its backward by
`torch.autograd.grad` in the input x (which requires grad) and every weight and bias: fresh
gradient tensors each step, so nothing accumulates in `.grad` and a CUDA graph of the whole
step replays to the same buffers. The contenders are bench's (mlpgen.bench.CONTENDERS): eager
nn.Sequential, it in a CUDA graph, torch.compile of the forward and the loss (AOTAutograd
compiles the backward with them), and the module's public FusedMLP in training mode, alone and
in a CUDA graph; whichever backward the module has, the bench only calls it. Beside them, the
step's floor: the loss and its backward alone on eager's output ("loss"), the part of a step
that no MLP changes.

Before it is timed, every contender's output and gradients are checked against the same step in
fp32 through nn.Sequential (`check_step`); a contender with a wrong one is WRONG and not timed
(the floor computes no MLP: it is not checked).
"""

from __future__ import annotations

import copy
import math
import os
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial

import torch

from mlpgen.bench import (
    Contender,
    Models,
    Prepared,
    allow_many_recompiles,
    build_sequential,
    capture,
    clone,
)
from mlpgen.runtime import train_lane
from mlpgen.runtime.train import training_of
from mlpgen.spec import MLPSpec
from mlpgen.verify import Check, check

LOSS = "y.float().square().mean()"
GRAD_TOLERANCE = 2.0  # gradients: verify's tolerance times this (check_step says why)
EAGER_FACTOR = 2.0  # ... or this times eager's own error in the dtype, if larger
FORCED = ("MLPGEN_TRAIN_KERNELS", "MLPGEN_NATIVE_TRAIN")  # switches a run records where set


def loss_scale(spec: MLPSpec, m: int) -> float:
    """The power of two the loss is multiplied by before the backward (1 but for fp16).

    The mean's gradient 2y/(M*N) falls below fp16's smallest normal number (6e-5) at large
    batches, so an unscaled fp16 backward loses the gradient to underflow, in eager as in any
    kernel; fp16 training scales the loss (torch.amp.GradScaler) for that reason. This scale
    makes dL/dy about y/sqrt(M): normal at M = 2^22, and the weight gradients, sums over M
    rows, about sqrt(M) times their per-row terms, far from fp16's largest number. A power of
    two scales exactly, so the scaled gradients compare with the fp32 reference's scaled ones.
    """
    if spec.dtype != "fp16":
        return 1.0
    return 2.0 ** round(math.log2(spec.widths[-1] * math.sqrt(m) / 2))


def result_names(spec: MLPSpec) -> tuple[str, ...]:
    """What a step returns, in order: y, dx, then dW and db of each layer (parameter order)."""
    names = ["y", "dx"]
    for i in range(len(spec.widths) - 1):
        names += [f"dW{i}", f"db{i}"] if spec.bias else [f"dW{i}"]
    return tuple(names)


class LossOf(torch.nn.Module):
    """The model's forward and the loss as one module (what torch.compile compiles)."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor, scale: torch.Tensor | None):
        y = self.model(x)
        loss = y.float().square().mean()
        return y, loss if scale is None else loss * scale


def step(loss_of: Callable, params: tuple, x: torch.Tensor, scale: torch.Tensor | None):
    """One training step: (y, dx, dW0, db0, dW1, ...)."""
    y, loss = loss_of(x, scale)
    return (y, *torch.autograd.grad(loss, (x, *params)))


@contextmanager
def eager_precision(dtype: torch.dtype):
    """Eager's fp32 matrix products in tf32, as the module's kernels run fp32 dots on a GPU."""
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = before or dtype == torch.float32
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before


@dataclass(frozen=True)
class StepCheck(Check):
    """check_step's verdict: the worst of the output's and the gradients' checks (where, got
    and want are that tensor's), and each one's err by name."""

    errs: dict[str, float] = field(default_factory=dict)


def check_step(
    got: Sequence[torch.Tensor],
    want: Sequence[torch.Tensor],
    spec: MLPSpec,
    eager: Sequence[torch.Tensor] | None = None,
) -> Check:
    """Every tensor of a step against the fp32 step's, element-wise within verify's tolerance
    for the dtype: the output as verify.check does; each gradient within twice that tolerance,
    both parts relative to the largest |element| s of the reference's gradient, i.e.
    |got - want| <= 2 * (atol * s + rtol * |want|). Relative to s because a gradient is a sum
    over rows (dW, db) or units (dx) of products rounded to the dtype, so its error scales with
    the tensor's magnitude rather than each element's (an element that sums to nearly zero
    keeps the error of its large terms), and gradients come at any scale (the loss is a mean
    over M*N elements); twice because the backward rounds its own intermediates (dL/dh of each
    layer) in the dtype on top of the forward's.

    eager: the same step through nn.Sequential in the dtype. Where given, a gradient element
    may also be off by EAGER_FACTOR times eager's largest error in that tensor: through relu or
    leaky_relu, a pre-activation within rounding of 0 lands on either side in any forward in
    the dtype, and the gradient of its whole row flips with it, in eager as in a kernel."""
    with torch.no_grad():
        return _check_step(got, want, spec, eager)


def check_grad(g, w, dtype: str, e=None, name: str = "gradient") -> Check:
    """One gradient g against the fp32 reference's w as check_step judges it (e: eager's); where
    and got/want relative to w's largest |element|."""
    s = float(w.abs().max()) if w.numel() else 1.0
    s = s if s > 0 else 1.0
    g, w = g.float() / s, w.float() / s
    floor = 0.0
    if e is not None and e.shape == w.shape and w.numel():
        floor = EAGER_FACTOR * float((e.float() / s - w).abs().max())
    result = check(g, w, dtype, GRAD_TOLERANCE, floor)
    if result.ok:
        return result
    return replace(result, reason=f"{result.reason}, over the largest |{name}| of {s:.3g}")


def _check_step(got, want, spec: MLPSpec, eager) -> Check:
    names = result_names(spec)
    if len(got) != len(names) or len(want) != len(names):
        return StepCheck(False, math.inf, reason=f"{len(got)} results, expected {len(names)}")
    worst, errs = None, {}
    eager = [None] * len(names) if eager is None else eager
    for name, g, w, e in zip(names, got, want, eager):
        if name == "y":
            result = check(g, w, spec.dtype)
        else:
            result = check_grad(g, w, spec.dtype, e, name)
        errs[name] = result.err
        if worst is None or result.err > worst[1].err:
            worst = (name, result)
    name, w = worst  # failing where any tensor fails: the worst fails then
    reason = f"{name}: {w.reason}" if not w.ok else ""
    return StepCheck(w.ok, w.err, w.where, w.got, w.want, reason, errs)


class TrainModels(Models):
    """bench.Models for a training step: the same contenders, each running `step`."""

    time_wrong = False  # a wrong gradient is not timed
    train = True

    def environment(self, mod, batches: Sequence[int], device) -> dict:
        """Per batch, which backward the module's training steps run: its kernels, cuBLASLt's
        GEMMs ("cublaslt") or the torch ops (where they are off, or the bucket's tuned "train"
        is the torch backward); the training lane MLPGEN_NATIVE_TRAIN selects ("native":
        after the first, recorded kernel steps run from C++ where the module launches directly
        on a GPU; "python"); and MLPGEN_TRAIN_KERNELS and MLPGEN_NATIVE_TRAIN where set
        (forced choices, recorded with the run)."""
        probe = torch.empty(1, self.spec.widths[0], dtype=self.weights[0].dtype, device=device)
        backward = {}
        for b in batches:
            cfg = training_of(mod).config(b, probe)
            backward[str(b)] = "torch" if cfg is None else cfg.get("backward", "kernels")
        env = {"backward": backward}
        env["train_lane"] = "native" if train_lane.enabled() else "python"
        env |= {k: os.environ[k] for k in FORCED if os.environ.get(k)}
        return env

    def __init__(self, spec: MLPSpec, mod, weights, biases):
        super().__init__(spec, mod, weights, biases)
        self.fused.train()
        self.seq_loss, self.fused_loss = LossOf(self.seq), LossOf(self.fused)
        self.loss_alone = LossOf(torch.nn.Identity())  # the floor contender's step
        w32 = [w.float() for w in weights]
        b32 = None if biases is None else [b.float() for b in biases]
        self.reference = LossOf(build_sequential(spec, w32, b32))

    def scale(self, m: int, device) -> torch.Tensor | None:
        s = loss_scale(self.spec, m)
        return None if s == 1 else torch.tensor(s, dtype=torch.float32, device=device)

    def compiled_for(self, mode: str) -> Callable:
        """One torch.compile per mode of the forward and the loss, on its own copy of the
        model (dynamic=False: each batch size is compiled on its first call)."""
        if mode not in self.compiled:
            allow_many_recompiles()
            self.compiled[mode] = torch.compile(
                LossOf(copy.deepcopy(self.seq)),
                mode=None if mode == "default" else mode,
                dynamic=False,
            )
        return self.compiled[mode]

    def prepare(self, contender: Contender, x: torch.Tensor, sync: Callable) -> Prepared:
        x = x.detach().requires_grad_()
        scale = self.scale(x.shape[0], x.device)
        if contender.compile_mode:
            model = self.compiled_for(contender.compile_mode)
            run = partial(step, model, tuple(model.parameters()), x, scale)
            t0 = time.perf_counter()
            run()  # compiles for this shape
            run()  # max-autotune: records its CUDA graphs
            sync()
            # clone: max-autotune's CUDA graphs reuse their output buffers on the next step
            return Prepared(
                call=run, output=lambda: clone(run()), compile_s=time.perf_counter() - t0
            )
        if contender.floor:  # the loss and its backward on eager's output, a leaf
            with torch.no_grad():
                y = self.seq(x).requires_grad_()
            run = partial(step, self.loss_alone, (), y, scale)
            return Prepared(call=run, output=run)
        model = self.fused_loss if contender.name.startswith("mlpgen") else self.seq_loss
        if contender.graph:
            # a copy (the same weights): the captured step keeps its autograd graph alive, whose
            # parameters' gradient nodes belong to the capture's stream, and every later step
            # through those parameters on another stream would wait on it
            model = copy.deepcopy(model)
            return capture(partial(step, model, tuple(model.parameters()), x, scale))
        run = partial(step, model, tuple(model.parameters()), x, scale)
        run()  # the checked step is a steady one: a first step may record the native lane's
        return Prepared(call=run, output=run)

    def expected(self, x: torch.Tensor) -> tuple[tuple, tuple]:
        """The step in fp32 through nn.Sequential, with the same loss scale, and the same step
        through it in the dtype (check_step's eager)."""
        scale = self.scale(x.shape[0], x.device)
        ref, seq = self.reference, self.seq_loss
        x32 = x.detach().float().requires_grad_()
        want = tuple(t.detach() for t in step(ref, tuple(ref.parameters()), x32, scale))
        with eager_precision(x.dtype):
            xe = x.detach().clone().requires_grad_()
            eager = tuple(t.detach() for t in step(seq, tuple(seq.parameters()), xe, scale))
        return want, eager

    def verdict(self, output, expected) -> Check:
        want, eager = expected
        return check_step(output, want, self.spec, eager)

    def settings(self, batches: Sequence[int]) -> dict:
        """What a --train run records in its settings, beside bench's."""
        out = {
            "grad": f"a training step per call: forward, loss {LOSS}, torch.autograd.grad of "
            "the loss in x (requires grad) and every weight and bias (fresh tensors, nothing "
            "accumulates in .grad); graph contenders capture the whole step",
            "check": "before timing, the output (verify.check) and every gradient (twice verify's "
            "tolerance, relative to the reference gradient's largest element, or twice eager's "
            "largest error in the dtype if larger: relu kinks) against the same step in fp32 "
            "through nn.Sequential; a WRONG contender is not timed",
            "compile": "one torch.compile per mode of the forward and the loss, dynamic=False "
            "(AOTAutograd compiles the backward): each batch size is compiled on its first "
            "call; compile_s is that time and is not in the timings",
            "loss": LOSS,
        }
        if self.spec.dtype == "fp16":
            out["loss_scale"] = {str(b): loss_scale(self.spec, b) for b in batches}
        return out
