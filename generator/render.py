"""Jinja rendering: one strict environment; templates receive a spec and a config (plus values
that Python computed from them) and nothing else."""

from __future__ import annotations

import ast
import hashlib
import inspect
import io
import re
import tokenize
from functools import cache, lru_cache
from pathlib import Path

import jinja2

import mlpgen.templates
from mlpgen import dispatch
from mlpgen.activations import ACTIVATIONS
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies import STRATEGIES
from mlpgen.verify import TOLERANCES

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
    for path in sorted(TEMPLATE_DIR.glob("*.j2")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def kernel_names(spec: MLPSpec, config: KernelConfig) -> list[str]:
    """The module's KERNELS entries of one config: config.kernel_name (none without a kernel)."""
    return STRATEGIES[config.strategy].kernel_names(spec, config)


def kernel_tiles(spec: MLPSpec, config: KernelConfig) -> dict[str, int]:
    """The tile sizes a config passes its kernel as tl.constexpr arguments (none where the
    strategy writes them into the kernel)."""
    tiles = STRATEGIES[config.strategy].tiles
    return {} if tiles is None else tiles(spec, config)


def packed_activations(spec: MLPSpec) -> dict[str, tuple[str, ...]]:
    """The spec's activations that run two fp16 values per instruction (fp16 modules only):
    name -> its PTX lines."""
    if spec.dtype != "fp16":
        return {}
    names = dict.fromkeys((spec.act, spec.out_act))  # ordered, unique
    return {n: ACTIVATIONS[n].half2_ptx for n in names if ACTIVATIONS[n].half2_ptx}


def render_kernel(spec: MLPSpec, config: KernelConfig, name: str | None = None) -> str:
    """Source of the @triton.jit kernels of one config, from its strategy's template
    (templates/kernel_<strategy>.j2) and plan, named `name` (default: the strategy's
    function_name). Its kernel_tiles are constexpr arguments after M, not written in."""
    strategy = STRATEGIES[config.strategy]
    if not strategy.has_kernel:
        raise ValueError(f"the {config.strategy} strategy has no kernel")
    template = environment().get_template(f"kernel_{config.strategy}.j2")
    plan = strategy.planner(spec, config)
    source = template.render(
        name=name or strategy.function_name(spec, config),
        spec=spec,
        config=config,
        layers=plan,
        plan=plan,
        tiles=list(kernel_tiles(spec, config)),
        tl_dtype=TL_DTYPES[spec.dtype],
        macros=MACROS,
        packed=packed_activations(spec),
        **strategy.template_args(spec, config),
    )
    return compact(source)


def _statements(source: str):
    """(first row, last row, whether it has a comment) of each logical line of `source`."""
    found, start, comment = [], None, False
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.ENDMARKER:
            break
        if start is None and tok.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.NL):
            continue
        if start is None:
            start, comment = tok.start[0], False
        comment = comment or tok.type == tokenize.COMMENT
        if tok.type == tokenize.NEWLINE:
            found.append((start, tok.end[0], comment))
            start = None
    return found


def _joined(pieces: list[str]) -> str:
    text = pieces[0]
    for piece in pieces[1:]:
        if piece.startswith((")", "]")):
            text = text.rstrip(",") + piece
        else:
            text += piece if text.endswith(("(", "[")) else " " + piece
    return text


def _same_code(a: str, b: str) -> bool:
    return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))


def compact(source: str, width: int = 100) -> str:
    """`source` with each statement that the templates spread over lines (a call an argument a
    line) on one line where it fits in `width` columns, else its arguments on one line between
    the brackets' lines where they fit; statements with comments stay as written. The syntax
    tree is unchanged (checked per statement): the kernels compile exactly as before."""
    lines = source.split("\n")
    for first, last, comment in reversed(_statements(source)):
        if last == first or comment:
            continue
        block = lines[first - 1 : last]
        indent = block[0][: len(block[0]) - len(block[0].lstrip())]
        code = "\n".join(line.removeprefix(indent) for line in block)
        pieces = [line.strip() for line in block]
        one = indent + _joined(pieces)
        if len(one) <= width and _same_code(code, one.strip()):
            lines[first - 1 : last] = [one]
        elif len(block) > 3 and pieces[0].endswith("(") and pieces[-1].startswith(")"):
            body = indent + "    " + _joined(pieces[1:-1]).rstrip(",")
            three = [block[0], body, block[-1]]
            if len(body) <= width and _same_code(code, "\n".join(t[len(indent) :] for t in three)):
                lines[first - 1 : last] = three
    return "\n".join(lines)


def shared_kernels(spec: MLPSpec, configs) -> tuple[list[str], dict[str, tuple[str, tuple]]]:
    """(the kernels' sources, KERNELS: a config's kernel name -> (its function's name, its
    tiles)). Configs whose kernels differ only in their tiles share one function; a family whose
    configs render differently (masks, unrolled chunks) gets one function per source, numbered."""
    sources: dict[str, str] = {}  # source -> function name
    table = {}
    for config in sorted(configs, key=lambda c: c.kernel_name):
        strategy = STRATEGIES[config.strategy]
        tiles = kernel_tiles(spec, config)
        if not tiles:  # its tiles written in: a function of its own
            src = render_kernel(spec, config, name=config.kernel_name).strip("\n")
            sources[src] = config.kernel_name
            table[config.kernel_name] = (config.kernel_name, ())
            continue
        family = strategy.function_name(spec, config)
        src = render_kernel(spec, config, name="_KERNEL_").strip("\n")
        if src not in sources:
            taken = sum(1 for n in sources.values() if n == family or n.startswith(family + "_v"))
            sources[src] = family if not taken else f"{family}_v{taken + 1}"
        table[config.kernel_name] = (sources[src], tuple(tiles.values()))
    texts = [src.replace("def _KERNEL_", f"def {name}") for src, name in sources.items()]
    return texts, table


def generate_command(spec: MLPSpec) -> str:
    """The mlpgen command line that generates `spec`'s module (search options aside)."""
    cmd = f"mlpgen --widths {','.join(map(str, spec.widths))} --act {spec.act}"
    if spec.out_act != "none":
        cmd += f" --out-act {spec.out_act}"
    return cmd + f" --dtype {spec.dtype}" + ("" if spec.bias else " --no-bias")


def epilogue_gelu(spec: MLPSpec) -> bool | None:
    """use_gelu for the module's cuBLASLt epilogue path, None when the spec cannot take it."""
    if STRATEGIES["epilogue"].rule(spec, KernelConfig(strategy="epilogue"), 0) is not None:
        return None
    return spec.act == "gelu_tanh"


# strategy -> the template of its module-side launch code (grids, workspaces, extra launches);
# row-block strategies (rowblock, stream) launch by the module's generic one-kernel path
LAUNCH_TEMPLATES = {
    "persist": "launch_persist.j2",
    "split": "launch_split.j2",
    "stream_tma": "launch_stream_tma.j2",
    "cluster": "launch_cluster.j2",
}
# module_helpers.j2's macros in the order the module defines them (a helper after those it
# calls), with the names whose call makes a module need each
HELPERS = (
    ("tanh", ("_tanh",)),
    ("pdl", ("_pdl_enter", "_pdl_wait", "_pdl_release")),
    ("grid_sync", ("_grid_sync",)),
    ("gelu", ("_gelu",)),
    ("cluster", ("_cluster_buffer", "_cluster_store", "_cluster_load", "_quad_slot")),
)


def _calls(text: str, names) -> bool:
    return any(re.search(rf"\b{n}\(", text) for n in names)


def helper_sources(spec: MLPSpec, kernel_sources: list[str]) -> list[str]:
    """The @triton.jit helpers the kernels call, and the helpers those call, in HELPERS order
    (packed fp16 activations after the others)."""
    macros = environment().get_template("module_helpers.j2").module
    text = "\n".join(kernel_sources)
    packed = [
        macros.packed_act(name, ptx, MACROS)
        for name, ptx in packed_activations(spec).items()
        if _calls(text, (f"_{name}_f16",))
    ]
    text += "".join(packed)
    chosen = []
    for macro, names in reversed(HELPERS):  # callers first: their source names what they call
        if _calls(text, names):
            source = str(getattr(macros, macro)())
            chosen.append(source)
            text += source
    return [src.strip("\n") for src in [*reversed(chosen), *packed]]


def render_module(
    spec: MLPSpec,
    configs: list[KernelConfig],
    tuned_literal: str,
    provenance_literal: str,
    header: dict,
    spec_literal: str,
    op: bool = True,
) -> str:
    """The standalone module: docstring, SPEC, TUNED, PROVENANCE, the kernels of `configs` (but
    cluster's, which mlpgen.runtime renders) and the helpers they call, the shared rules, a
    launch part per strategy used, mlp(), autograd (its training kernels are
    mlpgen.runtime.train's), FusedMLP and the self-check. `op`: whether the module registers
    its torch.compile custom op on import (see emit.render)."""
    kernels = {c.kernel_name: c for c in configs if c.has_kernel}
    # cluster kernels are mlpgen.runtime's (mlpgen.runtime.cluster): only it launches them
    carried = [c for c in kernels.values() if not STRATEGIES[c.strategy].clusters]
    kernel_sources, kernel_table = shared_kernels(spec, carried)
    strategies = {dispatch.launch_kind(c.to_dict()) for c in kernels.values()}
    used = {c.strategy for c in configs}
    launches = sorted({LAUNCH_TEMPLATES[s] for s in strategies if s in LAUNCH_TEMPLATES})
    launch_sources = [environment().get_template(t).render().strip("\n") for t in launches]
    return (
        environment()
        .get_template("module.py.j2")
        .render(
            spec=spec,
            spec_literal=spec_literal,
            tuned_literal=tuned_literal,
            provenance_literal=provenance_literal,
            header=header,
            helper_sources=helper_sources(spec, kernel_sources),
            kernel_sources=kernel_sources,
            launch_sources=launch_sources,
            # the strategy tables that the launch parts fill (_GRIDS["persist"] = ...)
            tables=set(re.findall(r"^(_[A-Z_]+)(?:\[|\.add\()", "\n".join(launch_sources), re.M)),
            rule_sources=[inspect.getsource(f).strip("\n") for f in dispatch.RENDERED],
            epilogue_gelu=epilogue_gelu(spec) if "epilogue" in used else None,
            kernel_table=kernel_table,
            torch_dtype=TORCH_DTYPES[spec.dtype],
            # the command that generates this MLP in another dtype, as an f-string of _dtype_error
            generate_command=generate_command(spec).replace(
                f"--dtype {spec.dtype}", "--dtype {other}"
            ),
            sequential_src=sequential_src(spec),
            register_op=op,
            rtol=TOLERANCES[spec.dtype].rtol,
            atol=TOLERANCES[spec.dtype].atol,
        )
    )


def sequential_src(spec: MLPSpec) -> str:
    """The equivalent nn.Sequential's layers without Identity, as a list literal: each Linear's
    (in, out), each activation's module."""
    layers = []
    for i, shape in enumerate(zip(spec.widths[:-1], spec.widths[1:])):
        act = ACTIVATIONS[spec.act if i < len(spec.widths) - 2 else spec.out_act].module_src
        layers += [repr(shape)] + ([act] if act != "torch.nn.Identity()" else [])
    return "[" + ", ".join(layers) + "]"


def module_lines(spec: MLPSpec, configs) -> int:
    """Lines of a module whose tables name `configs` (its TUNED literal left out: one line a
    cell whatever the cell holds). What the configs add is their kernel functions (one per
    function, tile variants sharing it: shared_kernels), the helpers those call and, per
    strategy, its launch code (LAUNCH_TEMPLATES) and side tables: tens to hundreds of lines
    where a strategy or function is new, one KERNELS line where a tile variant is."""
    return _module_lines(spec, frozenset(configs))


@lru_cache(maxsize=1024)
def _module_lines(spec: MLPSpec, configs: frozenset) -> int:
    header = {"version": "", "template_hash": "", "date": ""}
    return render_module(spec, list(configs), "{}", "{}", header, "{}").count("\n")
