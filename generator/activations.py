"""The one table of activations: each name maps to a Jinja macro in templates/activations.j2
(the Triton expression) and to the torch function the reference path and the tests use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class Activation:
    name: str
    torch_fn: Callable[[torch.Tensor], torch.Tensor]
    torch_src: str  # torch_fn as source, for the standalone generated module
    module_src: str  # the nn.Module a user's nn.Sequential would hold, as source
    # dL/dz from g = dL/d act(z), as a torch expression of g and z (the pre-activation): the
    # generated module's backward. aten's own backward ops, so gradients match eager autograd.
    grad_src: str

    @property
    def macro(self) -> str:
        """Name of the Triton-expression macro in templates/activations.j2."""
        return f"act_{self.name}"


ACTIVATIONS: dict[str, Activation] = {
    a.name: a
    for a in (
        Activation("none", lambda x: x, "x", "torch.nn.Identity()", "g"),
        Activation(
            "relu",
            F.relu,
            "torch.relu(x)",
            "torch.nn.ReLU()",
            "torch.ops.aten.threshold_backward(g, z, 0)",
        ),
        Activation(
            "leaky_relu",
            F.leaky_relu,
            "torch.nn.functional.leaky_relu(x)",
            "torch.nn.LeakyReLU()",
            "torch.ops.aten.leaky_relu_backward(g, z, 0.01, False)",
        ),
        Activation(
            "gelu",
            F.gelu,
            "torch.nn.functional.gelu(x)",
            "torch.nn.GELU()",
            "torch.ops.aten.gelu_backward(g, z)",
        ),
        Activation(
            "gelu_tanh",
            lambda x: F.gelu(x, approximate="tanh"),
            'torch.nn.functional.gelu(x, approximate="tanh")',
            'torch.nn.GELU(approximate="tanh")',
            'torch.ops.aten.gelu_backward(g, z, approximate="tanh")',
        ),
        Activation(
            "silu",
            F.silu,
            "torch.nn.functional.silu(x)",
            "torch.nn.SiLU()",
            "torch.ops.aten.silu_backward(g, z)",
        ),
        Activation(
            "sigmoid",
            torch.sigmoid,
            "torch.sigmoid(x)",
            "torch.nn.Sigmoid()",
            "torch.ops.aten.sigmoid_backward(g, torch.sigmoid(z))",
        ),
        Activation(
            "tanh",
            torch.tanh,
            "torch.tanh(x)",
            "torch.nn.Tanh()",
            "torch.ops.aten.tanh_backward(g, torch.tanh(z))",
        ),
    )
}
