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

    @property
    def macro(self) -> str:
        """Name of the Triton-expression macro in templates/activations.j2."""
        return f"act_{self.name}"


ACTIVATIONS: dict[str, Activation] = {
    a.name: a
    for a in (
        Activation("none", lambda x: x, "x", "torch.nn.Identity()"),
        Activation("relu", F.relu, "torch.relu(x)", "torch.nn.ReLU()"),
        Activation(
            "leaky_relu",
            F.leaky_relu,
            "torch.nn.functional.leaky_relu(x)",
            "torch.nn.LeakyReLU()",
        ),
        Activation("gelu", F.gelu, "torch.nn.functional.gelu(x)", "torch.nn.GELU()"),
        Activation(
            "gelu_tanh",
            lambda x: F.gelu(x, approximate="tanh"),
            'torch.nn.functional.gelu(x, approximate="tanh")',
            'torch.nn.GELU(approximate="tanh")',
        ),
        Activation("silu", F.silu, "torch.nn.functional.silu(x)", "torch.nn.SiLU()"),
        Activation("sigmoid", torch.sigmoid, "torch.sigmoid(x)", "torch.nn.Sigmoid()"),
        Activation("tanh", torch.tanh, "torch.tanh(x)", "torch.nn.Tanh()"),
    )
}
