"""The one table of activations: each name maps to Jinja macros in templates/activations.j2
(the Triton expressions of act(x) and of its derivative act'(z)) and to the torch function the
reference path and the tests use."""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F


def f16x2(value: float) -> str:
    """A PTX immediate holding `value` as fp16 in both halves of a 32-bit register."""
    (bits,) = struct.unpack("<H", struct.pack("<e", value))
    return f"0x{bits:04X}{bits:04X}"


def _ptx(*lines: str, **constants: float) -> tuple[str, ...]:
    """A PTX block over packed fp16 pairs, line by line: scratch registers z q p h, and each
    {name} a register holding f16x2(value) (f16x2 instructions take registers, not immediates)."""
    regs = "".join(f", c_{k}" for k in constants)
    movs = tuple(f"mov.b32 c_{k}, {f16x2(v)};" for k, v in constants.items())
    body = tuple(line.format(**{k: f"c_{k}" for k in constants}) for line in lines)
    return (f"{{ .reg .b32 z, q, p, h{regs};", *movs, *body, "}")


@dataclass(frozen=True)
class Activation:
    name: str
    torch_fn: Callable[[torch.Tensor], torch.Tensor]
    module_src: str  # the nn.Module a user's nn.Sequential would hold, as source (the module's)
    # dL/dz from g = dL/d act(z) and z (the pre-activation), by aten's own backward ops, so the
    # gradients are eager autograd's (mlpgen.runtime.op's torch backward)
    grad_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    # PTX lines computing act($1) into $0 for two fp16 values packed in one 32-bit register (f16x2
    # instructions: two elements each). fp16 modules store every activation in fp16 anyway, and
    # this halves the epilogue arithmetic that large batches pay.
    # None: the fp32 expression only.
    half2_ptx: tuple[str, ...] | None = None
    # act' is a function of the output act(z) (relu, leaky_relu, sigmoid, tanh): the training
    # kernels keep the layer's output, which the next layer needs anyway, and no Z (as eager
    # autograd does for these); the others keep Z
    grad_of_output: bool = False

    @property
    def macro(self) -> str:
        """Name of the Triton-expression macro in templates/activations.j2."""
        return f"act_{self.name}"

    @property
    def saved(self) -> str | None:
        """What the training kernels keep for act': "h" (the output), "z", or None (act' = 1)."""
        if self.name == "none":
            return None
        return "h" if self.grad_of_output else "z"


ACTIVATIONS: dict[str, Activation] = {
    a.name: a
    for a in (
        Activation("none", lambda x: x, "torch.nn.Identity()", lambda g, z: g),
        Activation(
            "relu",
            F.relu,
            "torch.nn.ReLU()",
            lambda g, z: torch.ops.aten.threshold_backward(g, z, 0),
            grad_of_output=True,
        ),
        Activation(
            "leaky_relu",
            F.leaky_relu,
            "torch.nn.LeakyReLU()",
            lambda g, z: torch.ops.aten.leaky_relu_backward(g, z, 0.01, False),
            grad_of_output=True,
        ),
        Activation(
            "gelu",
            F.gelu,
            "torch.nn.GELU()",
            lambda g, z: torch.ops.aten.gelu_backward(g, z),
            # the module's erf fit (_gelu): z = x / sqrt 2, erf(z) ~ tanh(z (a + b z^2 + c z^4))
            _ptx(
                "mul.rn.f16x2 z, $1, {rsqrt2}; mul.rn.f16x2 q, z, z; min.f16x2 q, q, {twelve};",
                "fma.rn.f16x2 p, q, {c}, {b}; fma.rn.f16x2 p, p, q, {a}; mul.rn.f16x2 p, z, p;",
                "tanh.approx.f16x2 p, p; mul.rn.f16x2 h, $1, {half}; fma.rn.f16x2 $0, h, p, h;",
                rsqrt2=0.7071067811865476,
                twelve=12.0,
                a=1.1281233291765482,
                b=0.10414431674387942,
                c=-0.0018154100802733513,
                half=0.5,
            ),
        ),
        Activation(
            "gelu_tanh",
            lambda x: F.gelu(x, approximate="tanh"),
            'torch.nn.GELU(approximate="tanh")',
            lambda g, z: torch.ops.aten.gelu_backward(g, z, approximate="tanh"),
            # tanh(x (k + k 0.044715 x^2)) with k = sqrt(2 / pi)
            _ptx(
                "mul.rn.f16x2 q, $1, $1; fma.rn.f16x2 p, q, {k3}, {k}; mul.rn.f16x2 p, $1, p;",
                "tanh.approx.f16x2 p, p; mul.rn.f16x2 h, $1, {half}; fma.rn.f16x2 $0, h, p, h;",
                k=0.7978845608028654,
                k3=0.7978845608028654 * 0.044715,
                half=0.5,
            ),
        ),
        Activation(
            "silu",
            F.silu,
            "torch.nn.SiLU()",
            lambda g, z: torch.ops.aten.silu_backward(g, z),
            # x sigmoid(x) = h + h tanh(h), h = x / 2
            _ptx(
                "mul.rn.f16x2 h, $1, {half}; tanh.approx.f16x2 p, h; fma.rn.f16x2 $0, h, p, h;",
                half=0.5,
            ),
        ),
        Activation(
            "sigmoid",
            torch.sigmoid,
            "torch.nn.Sigmoid()",
            lambda g, z: torch.ops.aten.sigmoid_backward(g, torch.sigmoid(z)),
            # (1 + tanh(x / 2)) / 2
            _ptx(
                "mul.rn.f16x2 h, $1, {half}; tanh.approx.f16x2 p, h;",
                "fma.rn.f16x2 $0, p, {half}, {half};",
                half=0.5,
            ),
            grad_of_output=True,
        ),
        Activation(
            "tanh",
            torch.tanh,
            "torch.nn.Tanh()",
            lambda g, z: torch.ops.aten.tanh_backward(g, torch.tanh(z)),
            ("tanh.approx.f16x2 $0, $1;",),
            grad_of_output=True,
        ),
    )
}
