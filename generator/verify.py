"""Correctness: random problems, the fp32 reference and the per-dtype tolerance that every
kernel (in tests, in the self-check and in the tuner) is held to."""

from __future__ import annotations

import math

import torch

from mlpgen.activations import ACTIVATIONS
from mlpgen.spec import MLPSpec

# Relative norm error ||out - ref|| / ||ref|| against an fp32 reference.
TOLERANCE = {
    "fp32": 5e-3,  # the GPU runs fp32 dots in tf32: 2.7e-3 seen on the H200 at depth 3
    "fp16": 1e-2,  # fp16 operands and hidden activations, fp32 accumulation
    "bf16": 2e-2,  # 8-bit mantissa: twice fp16's error
}
TORCH_DTYPE = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def random_problem(spec: MLPSpec, m: int, device="cpu", seed: int | None = None):
    """Fresh inputs and nn.Linear-scaled weights (so activations stay O(1) through depth)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else torch.seed() % 2**31)
    dtype = TORCH_DTYPE[spec.dtype]

    def rand(*shape, scale=1.0):
        t = (torch.rand(*shape, generator=gen) * 2 - 1) * scale
        return t.to(device=device, dtype=dtype)

    x = torch.randn(m, spec.widths[0], generator=gen).to(device=device, dtype=dtype)
    weights, biases = [], []
    for k, n in zip(spec.widths[:-1], spec.widths[1:]):
        bound = math.sqrt(3.0 / k)  # unit-variance outputs for unit-variance inputs
        weights.append(rand(n, k, scale=bound))
        biases.append(rand(n, scale=0.1))
    return x, weights, (biases if spec.bias else None)


def reference(spec: MLPSpec, x, weights, biases=None) -> torch.Tensor:
    """The MLP in fp32 from the (upcast) inputs: the ground truth every kernel is held to."""
    h = x.float()
    for i, w in enumerate(weights):
        h = torch.nn.functional.linear(h, w.float(), None if biases is None else biases[i].float())
        act = spec.out_act if i == len(weights) - 1 else spec.act
        h = ACTIVATIONS[act].torch_fn(h)
    return h


def rel_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref||; inf when out has a NaN or Inf (e.g. an unwritten poisoned cell)."""
    out = out.float()
    if not torch.isfinite(out).all():
        return math.inf
    denom = ref.norm().item()
    err = (out - ref).norm().item()
    return err / denom if denom > 0 else err
