"""epilogue: no Triton kernel: one cuBLAS GEMM per layer with the bias and the activation fused
into cuBLASLt's epilogue (relu, gelu_tanh), which saves eager's separate activation pass over
the hidden layer (large batches)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlpgen.strategies.base import Strategy

if TYPE_CHECKING:  # mlpgen.spec imports the strategies
    from mlpgen.spec import KernelConfig, MLPSpec

ACTIVATIONS = ("relu", "gelu_tanh")  # activations cuBLASLt's epilogue computes exactly


def reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if spec.act not in ACTIVATIONS:
        return f"cuBLASLt's epilogue has no exact {spec.act} (only {', '.join(ACTIVATIONS)})"
    if not spec.bias or spec.depth < 2:
        return "nothing to fuse: the epilogue path needs biases and a hidden layer"
    return None


STRATEGY = Strategy(name="epilogue", domain={}, rule=reason, row_tiled=False, takes_pdl=False)
