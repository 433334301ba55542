"""Jinja rendering: one strict environment; templates receive a spec and a config (plus values
that Python computed from them) and nothing else."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

import jinja2

import mlpgen.templates
from mlpgen.activations import ACTIVATIONS
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies import STRATEGIES

TEMPLATE_DIR = Path(mlpgen.templates.__file__).parent
TL_DTYPES = {"fp16": "tl.float16", "bf16": "tl.bfloat16", "fp32": "tl.float32"}
TORCH_DTYPES = {"fp16": "torch.float16", "bf16": "torch.bfloat16", "fp32": "torch.float32"}
MACROS = {name: a.macro for name, a in ACTIVATIONS.items()}  # name -> activations.j2 macro


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def template_hash() -> str:
    """Short hash of every template: generated modules record which templates made them."""
    h = hashlib.sha256()
    for path in sorted([*TEMPLATE_DIR.glob("*.j2"), *TEMPLATE_DIR.glob("*.cpp")]):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def kernel_names(spec: MLPSpec, config: KernelConfig) -> list[str]:
    """The @triton.jit functions that render_kernel defines: config.kernel_name, or for a
    strategy of one kernel per layer, kernel_name + "_l<layer>" for each."""
    return STRATEGIES[config.strategy].kernel_names(spec, config)


def packed_activations(spec: MLPSpec) -> dict[str, tuple[str, ...]]:
    """The spec's activations that run two fp16 values per instruction (fp16 modules only):
    name -> its PTX lines."""
    if spec.dtype != "fp16":
        return {}
    names = dict.fromkeys((spec.act, spec.out_act))  # ordered, unique
    return {n: ACTIVATIONS[n].half2_ptx for n in names if ACTIVATIONS[n].half2_ptx}


def render_kernel(spec: MLPSpec, config: KernelConfig) -> str:
    """Source of the @triton.jit kernels of one config (kernel_names), from its strategy's
    template (templates/kernel_<strategy>.j2) and plan."""
    strategy = STRATEGIES[config.strategy]
    if not strategy.has_kernel:
        raise ValueError(f"the {config.strategy} strategy has no kernel")
    template = environment().get_template(f"kernel_{config.strategy}.j2")
    plan = strategy.planner(spec, config)
    return template.render(
        name=config.kernel_name,
        spec=spec,
        config=config,
        layers=plan,
        plan=plan,
        tl_dtype=TL_DTYPES[spec.dtype],
        macros=MACROS,
        packed=packed_activations(spec),
        **strategy.template_args(spec, config),
    )


def epilogue_gelu(spec: MLPSpec) -> bool | None:
    """use_gelu for the module's cuBLASLt epilogue path, None when the spec cannot take it."""
    if STRATEGIES["epilogue"].rule(spec, KernelConfig(strategy="epilogue"), 0) is not None:
        return None
    return spec.act == "gelu_tanh"


def render_module(
    spec: MLPSpec,
    configs: list[KernelConfig],
    tuned_literal: str,
    provenance_literal: str,
    header: dict,
) -> str:
    """The standalone module: header, SPEC, TUNED, kernels for `configs`, launcher, FusedMLP."""
    from mlpgen.emit import leaf_literal  # emit imports this module

    kernels = {c.kernel_name: c for c in configs if c.has_kernel}
    spec_literal = leaf_literal(spec.to_dict().items())
    return (
        environment()
        .get_template("module.py.j2")
        .render(
            spec=spec,
            spec_literal=spec_literal,
            tuned_literal=tuned_literal,
            provenance_literal=provenance_literal,
            header=header,
            kernel_sources=[render_kernel(spec, kernels[k]) for k in sorted(kernels)],
            epilogue_gelu=epilogue_gelu(spec),
            kernel_names=sorted(n for c in kernels.values() for n in kernel_names(spec, c)),
            torch_dtype=TORCH_DTYPES[spec.dtype],
            act_src=ACTIVATIONS[spec.act].torch_src,
            out_act_src=ACTIVATIONS[spec.out_act].torch_src,
            act_module_src=ACTIVATIONS[spec.act].module_src,
            out_act_module_src=ACTIVATIONS[spec.out_act].module_src,
            act_grad_src=ACTIVATIONS[spec.act].grad_src,
            macros=MACROS,
            packed=packed_activations(spec),
            out_act_grad_src=ACTIVATIONS[spec.out_act].grad_src,
            native_source=native_source(),
            clusters=any(c.strategy == "cluster" for c in kernels.values()),
        )
    )


@cache
def native_source() -> str:
    """templates/native_lane.cpp, which the module carries in a raw triple-quoted string."""
    text = (TEMPLATE_DIR / "native_lane.cpp").read_text()
    if '"""' in text or text.endswith("\\"):
        raise ValueError("native_lane.cpp cannot sit in a raw triple-quoted string")
    return text
