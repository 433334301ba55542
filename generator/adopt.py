"""Adopt the MLP blocks of a model: find every submodule whose forward is a chain of Linear
layers and activations, generate the module for each such spec, and swap the blocks in place.

A chain is found by tracing the module's forward with torch.fx, not by its class: timm's `Mlp`,
a hand-written fc1/act/fc2 module, one calling `F.gelu` and a plain nn.Sequential are all the
same graph. Identity and Dropout that does nothing (eval mode or p=0) are skipped; anything else
(a residual add, a norm, a gate, a Linear fed by something other than the previous layer) ends
the search with the first such operation named as the reason.
"""

from __future__ import annotations

import operator
import os
import re
import warnings
import weakref
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import torch
import torch.fx
import torch.nn.functional as F
from torch import nn

from mlpgen.activations import ACTIVATIONS
from mlpgen.emit import module_path, tune_command, write_module
from mlpgen.spec import DTYPES, MLPSpec, SpecError

if TYPE_CHECKING:
    from mlpgen.tune import TuneOptions

DTYPE_NAMES = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}
DROPOUTS = (
    nn.Dropout,
    nn.Dropout1d,
    nn.Dropout2d,
    nn.Dropout3d,
    nn.AlphaDropout,
    nn.FeatureAlphaDropout,
)


def _module_repr(m: nn.Module) -> str:
    """An activation module as mlpgen compares it: class and arguments, inplace= aside (it does
    not change the result); the generated module's from_module compares layers the same way."""
    text = repr(m).replace("inplace=True", "").replace("inplace=False", "")
    return text.replace("(, ", "(").replace(", )", ")")


def _activation_module(name: str) -> nn.Module:
    return eval(ACTIVATIONS[name].module_src, {"torch": torch})


# activation modules by their repr: "GELU(approximate='none')" -> "gelu", "ReLU()" -> "relu"
ACT_MODULES = {_module_repr(_activation_module(n)): n for n in ACTIVATIONS if n != "none"}
ACT_TYPES = {type(_activation_module(n)) for n in ACT_MODULES.values()}
# activation functions a forward may call, with the arguments mlpgen's activation has
ACT_FUNCTIONS = {
    F.relu: "relu",
    torch.relu: "relu",
    F.silu: "silu",
    torch.sigmoid: "sigmoid",
    F.sigmoid: "sigmoid",
    torch.tanh: "tanh",
    F.tanh: "tanh",
    F.gelu: "gelu",
    F.leaky_relu: "leaky_relu",
}
ACT_METHODS = {"relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh"}  # x.relu(), ...


@dataclass
class Chain:
    """A module's forward as an MLP: its spec and its Linear layers, first to last."""

    spec: MLPSpec
    linears: list[nn.Linear]

    def sequential(self) -> nn.Sequential:
        """nn.Sequential(Linear, act, ..., Linear[, out_act]) of the chain's own Linear layers:
        what the generated FusedMLP.from_module adopts."""
        layers: list[nn.Module] = []
        for i, lin in enumerate(self.linears):
            layers.append(lin)
            act = self.spec.out_act if i == len(self.linears) - 1 else self.spec.act
            if act != "none":
                layers.append(_activation_module(act))
        return nn.Sequential(*layers)


def _describe_node(node: torch.fx.Node) -> str:
    """A traced operation as a refusal names it."""
    if node.op == "call_module":
        return f"{node.target}"
    if node.op == "call_function":
        name = getattr(node.target, "__name__", str(node.target))
        return f"{name}()"
    if node.op == "call_method":
        return f".{node.target}()"
    if node.op == "get_attr":
        return f"a direct read of {node.target}"
    return f"{node.op} {node.target}"


def _function_activation(node: torch.fx.Node) -> str | None:
    """The activation a call_function/call_method node computes with mlpgen's arguments, or
    None (another function, or other arguments such as a leaky_relu slope of 0.2)."""
    if node.op == "call_method":
        return ACT_METHODS.get(node.target) if len(node.args) == 1 and not node.kwargs else None
    name = ACT_FUNCTIONS.get(node.target) if node.op == "call_function" else None
    extra = dict(node.kwargs)
    extra.pop("inplace", None)
    if name == "gelu":
        approximate = extra.pop("approximate", node.args[1] if len(node.args) > 1 else "none")
        name = {"none": "gelu", "tanh": "gelu_tanh"}.get(approximate)
    elif name == "leaky_relu":
        slope = extra.pop("negative_slope", node.args[1] if len(node.args) > 1 else 0.01)
        name = name if slope == 0.01 else None
    elif len(node.args) > 1 + (name in ("relu", "silu")):  # F.relu(x, inplace)
        return None
    return name if not extra else None


def _dropout_noop(node: torch.fx.Node) -> bool | None:
    """Whether an F.dropout(x, p, training) call does nothing (tracing fixed `training` to a
    constant); None where the node is no dropout call."""
    if node.op != "call_function" or node.target not in (F.dropout, torch.dropout):
        return None
    names = ("input", "p", "training", "inplace")
    args = dict(zip(names, node.args)) | dict(node.kwargs)
    default_training = node.target is F.dropout  # torch.dropout's training is positional
    return args.get("p", 0.5) == 0 or not args.get("training", default_training)


def _is_matrix_layer(m: nn.Module) -> bool:
    """nn.Linear, or another layer holding a weight matrix (transformers' Conv1D), not an
    embedding table: the layers an MLP block is made of."""
    weight = m._parameters.get("weight")
    return isinstance(m, nn.Linear) or (
        weight is not None
        and weight.dim() == 2
        and not isinstance(m, (nn.Embedding, nn.EmbeddingBag))
    )


def _blame(module: nn.Module, node: torch.fx.Node, reason: str) -> str:
    """The reason a traced operation ends the chain, naming the submodule the trace was inside
    where that says more: an activation class mlpgen does not have (QuickGELUActivation's
    `x * sigmoid(1.702 * x)`), or a matrix layer that is not an nn.Linear (GPT-2's Conv1D).
    The submodules the node is inside are looked at from the outermost in."""
    for key, value in (node.meta.get("nn_module_stack") or {}).items():
        path = value[0] if isinstance(value, tuple) else key
        try:
            child = module.get_submodule(path)
        except AttributeError:
            return reason
        name = type(child).__name__
        if _is_matrix_layer(child) and not isinstance(child, nn.Linear):
            return f"{path} ({name}) is not an nn.Linear: mlpgen adopts nn.Linear layers only"
        if not any(_is_matrix_layer(m) for m in child.modules()):
            return f"{path} ({name}) is neither a Linear nor an activation mlpgen has"
    return reason


def _steps(module: nn.Module) -> list[nn.Linear | str] | str:
    """The module's forward as its Linear layers and activation names in order, or the reason
    it is not such a chain."""
    try:
        graph = torch.fx.symbolic_trace(module).graph
    except Exception as e:  # data-dependent control flow, unsupported calls, ...
        text = " ".join(str(e).split())
        text = text if len(text) <= 100 else text[:100].rsplit(" ", 1)[0] + " ..."
        return f"its forward cannot be traced with torch.fx ({type(e).__name__}: {text})"
    inputs = [n for n in graph.nodes if n.op == "placeholder"]
    if len(inputs) != 1:
        return f"its forward takes {len(inputs)} inputs, an MLP takes one"
    current = inputs[0]
    steps: list[nn.Linear | str] = []
    for node in graph.nodes:
        if node.op == "placeholder":
            continue
        what = _describe_node(node)
        if node.op == "output":
            if node.args[0] is not current:
                return "its output is not the last layer's"
            return steps
        if node.op == "call_module":
            m = module.get_submodule(node.target)
            if not node.args or node.args[0] is not current or len(node.args) > 1 or node.kwargs:
                return (
                    f"{what} ({type(m).__name__}) does not take the previous layer's output "
                    "(a branch or a gate)"
                )
            if isinstance(m, nn.Identity):
                pass
            elif isinstance(m, DROPOUTS):
                if m.training and m.p > 0:
                    return f"{what} is a Dropout in training mode (fuse after .eval())"
            elif isinstance(m, nn.Linear):
                steps.append(m)
            elif _module_repr(m) in ACT_MODULES and type(m).__module__.startswith("torch.nn"):
                steps.append(ACT_MODULES[_module_repr(m)])
            else:
                shown = _module_repr(m) if type(m) in ACT_TYPES else type(m).__name__
                return f"{what} ({shown}) is neither a Linear nor an activation mlpgen has"
            current = node
            continue
        if node.op == "get_attr":
            return _blame(module, node, f"{what}: a parameter or buffer used outside a Linear")
        if node.op == "call_function" and node.target in (operator.add, torch.add):
            return _blame(module, node, f"{what}: a residual connection")
        if not node.args or node.args[0] is not current:
            reason = f"{what} does not take the previous layer's output (a branch or a gate)"
            return _blame(module, node, reason)
        noop = _dropout_noop(node)
        if noop is False:
            return f"{what} is a dropout in training mode (fuse after .eval())"
        if noop:
            current = node
            continue
        act = _function_activation(node)
        if act is None:
            return _blame(module, node, f"{what} is neither a Linear nor an activation mlpgen has")
        steps.append(act)
        current = node
    return "its forward returns nothing"


def chain_of(module: nn.Module, dtype: str | None = None) -> Chain | str:
    """The module as an MLP chain (dtype: the weights' unless given), or the reason it is not
    one, naming the first operation that is not part of a chain."""
    steps = _steps(module)
    if isinstance(steps, str):
        return steps
    linears = [s for s in steps if isinstance(s, nn.Linear)]
    if not linears:
        return "it has no Linear layer"
    if not isinstance(steps[0], nn.Linear):
        return f"it starts with {steps[0]} before its first Linear"
    acts: list[str] = []  # after each Linear: its activation, "none" where none follows
    for prev, step in zip(steps, steps[1:] + [None]):
        if isinstance(prev, nn.Linear):
            acts.append(step if isinstance(step, str) else "none")
            if isinstance(step, nn.Linear):
                return (
                    f"Linear({prev.in_features}->{prev.out_features}) is followed by "
                    f"Linear({step.in_features}->{step.out_features}) without an activation "
                    "between them"
                )
        elif isinstance(step, str):
            return f"two activations in a row ({prev}, {step})"
    hidden = set(acts[:-1])
    if len(hidden) > 1:
        return f"its hidden layers use different activations ({', '.join(sorted(hidden))})"
    for a, b in zip(linears, linears[1:]):
        if a.out_features != b.in_features:
            return f"Linear widths do not chain ({a.out_features} into {b.in_features})"
    if len({lin.bias is None for lin in linears}) > 1:
        return "some of its Linear layers have a bias and some do not"
    dtypes = {lin.weight.dtype for lin in linears}
    if dtype is None:
        if len(dtypes) > 1 or next(iter(dtypes)) not in DTYPE_NAMES:
            return f"its weights are {', '.join(sorted(map(str, dtypes)))}; give dtype="
        dtype = DTYPE_NAMES[next(iter(dtypes))]
    try:
        spec = MLPSpec(
            widths=(linears[0].in_features, *(lin.out_features for lin in linears)),
            act=hidden.pop() if hidden else "none",
            out_act=acts[-1],
            dtype=dtype,
            bias=linears[0].bias is not None,
        )
    except SpecError as e:
        return str(e)
    return Chain(spec, linears)


# ---------------------------------------------------------------------------------------------
# A generated module's FusedMLP.from_module and load_state_dict, where mlpgen is installed


def describe_layer(m) -> str:
    """A layer as from_module compares it: Linear shapes ((in, out) for the generated module's
    own Linear slots), activations by type and arguments, inplace= aside."""
    if isinstance(m, tuple):
        return f"Linear({m[0]}->{m[1]})"
    if isinstance(m, nn.Linear):
        return f"Linear({m.in_features}->{m.out_features})"
    return re.sub(r"(, )?inplace=(True|False)", "", repr(m))


def _sequence_mismatch(owner: str, name: str, got: list[str], expected: list[str]) -> str:
    """The message for a layer sequence that differs from the spec's (the Linear shapes agree)."""
    n = max(len(got), len(expected))
    got_, expected_ = got + ["(end)"] * (n - len(got)), expected + ["(end)"] * (n - len(expected))
    i = next(i for i in range(n) if got_[i] != expected_[i])
    what = "layer order" if sorted(got) == sorted(expected) else "activations"
    return (
        f"{owner}: {what} differ from {name} at layer {i}: got {got_[i]}, expected "
        f"{expected_[i]} (module: {', '.join(got)}; {name}: {', '.join(expected)})"
    )


def _leaves(owner: str, module: nn.Module):
    """The layers of a (nested) nn.Sequential in the order it runs them."""
    if isinstance(module, nn.Sequential):
        for child in module:
            yield from _leaves(owner, child)
    elif next(module.children(), None) is not None:
        raise ValueError(
            f"{owner}: cannot adopt a {type(module).__name__}: only nn.Sequential (and "
            f"subclasses such as torchvision.ops.MLP) say in which order their layers run"
        )
    else:
        yield module


def adopted_linears(
    module: nn.Module, canonical: list, bias: bool, owner: str, name: str, dtype: str
) -> list[nn.Linear]:
    """The Linear layers of `module`, first to last, where it computes the MLP whose layers are
    `canonical` ((in, out) for a Linear, else the activation module: a generated module's
    _canonical_layers()); else ValueError naming the first mismatch. An nn.Sequential (nested, or
    torchvision.ops.MLP) is walked as it runs, Identity and inactive Dropout skipped, and a lone
    Linear is a chain of one layer; any other module is traced first (chain_of). owner, name,
    dtype: the module's __name__, its spec's name and dtype."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"{owner}: from_module takes an nn.Module, got {type(module).__name__}")
    if not isinstance(module, (nn.Sequential, nn.Linear)):
        chain = chain_of(module, dtype=dtype)
        if isinstance(chain, str):
            raise ValueError(f"{owner}: cannot adopt {type(module).__name__}: {chain}")
        module = chain.sequential().train(module.training)
    acts = ", ".join(repr(m) for m in canonical if not isinstance(m, tuple)) or "none"
    layers = []
    for m in _leaves(owner, module):
        if isinstance(m, nn.Identity):
            continue
        if isinstance(m, DROPOUTS):
            if m.training and m.p > 0:
                raise ValueError(
                    f"{owner}: {m!r} is in training mode and FusedMLP has no dropout; "
                    f"adopt the module after .eval() (or with p=0)"
                )
            continue
        if not isinstance(m, nn.Linear) and (
            next(m.parameters(), None) is not None or next(m.buffers(), None) is not None
        ):
            raise ValueError(
                f"{owner}: cannot adopt {m!r}: FusedMLP computes only Linear layers and the "
                f"activations {acts}"
            )
        layers.append(m)
    linears = [m for m in layers if isinstance(m, nn.Linear)]
    shapes = [(lin.in_features, lin.out_features) for lin in linears]
    want = [m for m in canonical if isinstance(m, tuple)]
    if shapes != want:
        raise ValueError(f"{owner}: Linear shapes {shapes} do not match {name}'s {want}")
    for i, lin in enumerate(linears):
        if (lin.bias is not None) != bias:
            raise ValueError(
                f"{owner}: Linear {i} has bias={lin.bias is not None}, {name} has bias={bias}"
            )
    got = [describe_layer(m) for m in layers]
    expected = [describe_layer(m) for m in canonical]
    if got != expected:
        raise ValueError(_sequence_mismatch(owner, name, got, expected))
    return linears


def remap_state_dict(state_dict: dict, prefix: str, linear_names: list[str]) -> None:
    """Rename, in place, the keys of another nn.Sequential layout under `prefix`
    (torchvision.ops.MLP's 0, 3, 6, ..., nested Sequentials' 0.0, 0.2, ...) to FusedMLP's
    (`linear_names`, those of the plain nn.Sequential), Linear by Linear in order. Anything else
    is left for load_state_dict to report as missing or unexpected."""
    if all(f"{prefix}{n}.weight" in state_dict for n in linear_names):
        return
    groups: dict[tuple[int, ...], list[tuple[str, str]]] = {}
    for key in state_dict:
        if not key.startswith(prefix):
            continue
        path, _, leaf = key[len(prefix) :].rpartition(".")
        parts = path.split(".")
        if leaf in ("weight", "bias") and all(p.isdigit() for p in parts):
            groups.setdefault(tuple(map(int, parts)), []).append((leaf, key))
    if len(groups) != len(linear_names):
        return
    moved = {}
    for name, (_, leaves) in zip(linear_names, sorted(groups.items())):
        for leaf, key in leaves:
            moved[f"{prefix}{name}.{leaf}"] = state_dict.pop(key)
    state_dict.update(moved)


# ---------------------------------------------------------------------------------------------
# Whole models


class ModuleAdoption:
    """What a generated module's FusedMLP takes from mlpgen (its `_mlpgen("mlpgen.adopt")`):
    from_module's walk of a model's layers and the load_state_dict key renaming."""

    def __init__(self, ns: dict):
        self.ns = ns

    def linears(self, module: nn.Module) -> list[nn.Linear]:
        """adopted_linears for this module's layers."""
        ns = self.ns
        owner, name, dtype = ns["__name__"], ns["NAME"], ns["SPEC"]["dtype"]
        return adopted_linears(module, ns["_SEQUENTIAL"], ns["BIAS"], owner, name, dtype)

    def remap(self, state_dict: dict, prefix: str) -> None:
        """remap_state_dict to this module's layer names."""
        remap_state_dict(state_dict, prefix, self.ns["_LINEAR_NAMES"])


def attach(ns: dict) -> ModuleAdoption:
    """The adoption helpers of a generated module (its globals `ns`)."""
    return ModuleAdoption(ns)


@dataclass
class Replaced:
    path: str  # the submodule's name in the model
    spec: MLPSpec
    original: nn.Module | None = None  # None in a scan (nothing replaced)


@dataclass
class Left:
    path: str
    reason: str


@dataclass
class Report:
    """What fuse replaced (or scan would replace), what it left and why, the modules it wrote."""

    replaced: list[Replaced] = field(default_factory=list)
    left: list[Left] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)

    @property
    def specs(self) -> list[MLPSpec]:
        """The distinct specs of the replaced blocks, in the model's order."""
        return list(dict.fromkeys(r.spec for r in self.replaced))


def _is_fused(m: nn.Module) -> bool:
    """A generated FusedMLP (adopted already): it has from_module and to_module."""
    return callable(getattr(type(m), "from_module", None)) and callable(
        getattr(m, "to_module", None)
    )


def _checked_model(model, what: str) -> None:
    """TypeError where `model` is not an nn.Module (what: the function, for the message)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"mlpgen.{what} takes an nn.Module, got {type(model).__name__}")


def scan(model: nn.Module, dtype: str | None = None) -> Report:
    """Find the submodules fuse would replace (outermost first; a chain's own children are not
    looked at again) and those it leaves, with the reason: the modules with a forward of their
    own (not ModuleList and ModuleDict) holding two or more matrix layers (nn.Linear, GPT-2's
    Conv1D, ...). A module that holds a replaced block is not listed as left. Changes
    nothing. A model that is no nn.Module is a TypeError, a dtype not in DTYPES a SpecError."""
    _checked_model(model, "scan")
    if dtype is not None and dtype not in DTYPES:
        raise SpecError(
            f"dtype={dtype!r}: choose from {', '.join(DTYPES)}, or None for the weights'"
        )
    report = Report()
    taken: list[str] = []
    refused: dict[str, str] = {}
    for path, m in model.named_modules():
        if any(path.startswith(t + ".") for t in taken):
            continue
        if _is_fused(m):
            taken.append(path)
            continue
        if type(m).forward is nn.Module.forward or sum(map(_is_matrix_layer, m.modules())) < 2:
            continue
        chain = chain_of(m, dtype)
        if isinstance(chain, str):
            refused[path] = chain
        elif path == "":
            refused[path] = (
                "the model itself is the MLP: adopt it with the generated module's "
                "FusedMLP.from_module(model)"
            )
        else:
            report.replaced.append(Replaced(path, chain.spec))
            taken.append(path)
    for path, reason in refused.items():
        if not any(path == "" or t.startswith(path + ".") for t in taken):
            report.left.append(Left(path or "(the model)", reason))
    return report


def tune_hint(spec: MLPSpec, out: Path) -> str:
    """The command that generates and tunes `spec`'s module into `out` on a GPU machine."""
    return f"{tune_command(spec, {})} --out {out}"


def check_out(specs: list[MLPSpec], out: Path) -> list[MLPSpec]:
    """The specs whose module `out` lacks; a module there that is damaged or of another spec is
    a SpecError (checked with `ast`, never run), before anything is written."""
    from mlpgen.module_file import checked_module, short

    if out.exists() and not out.is_dir():
        raise SpecError(f"{out}: exists and is not a folder")
    missing = []
    for spec in specs:
        path = module_path(out, spec)
        if not os.path.lexists(path):
            missing.append(spec)
            continue
        if not path.is_file():
            raise SpecError(f"{short(path)}: not a regular file")
        held = checked_module(path, short(path))[0]
        if held != spec:
            raise SpecError(f"{path} holds {held.name}, not {spec.name}; nothing was written")
    return missing


_LOADED: dict[tuple[str, int], object] = {}  # (path, mtime): the imported generated module
# each replacement -> (the module it replaced, that module's chain): what unfuse restores
_ORIGINALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _load(path: Path):
    from mlpgen.selfcheck import load_module

    key = (str(path.resolve()), path.stat().st_mtime_ns)
    if key not in _LOADED:
        _LOADED[key] = load_module(path)
    return _LOADED[key]


def _set(model: nn.Module, path: str, m: nn.Module) -> None:
    parent, _, name = path.rpartition(".")
    setattr(model.get_submodule(parent), name, m)


def fuse(
    model: nn.Module,
    out: str | os.PathLike = "tuned",
    tune: bool | TuneOptions = False,
    dtype: str | None = None,
) -> Report:
    """Replace every MLP block of `model` (a submodule whose forward is a chain of two or more
    Linear layers with activations between them) by the generated FusedMLP holding its weights.

    Each spec's module is taken from `out`, or generated there: tuned where tune=True and a CUDA
    GPU is visible (tune: True for the tuner's default budget, or its TuneOptions), else with
    the heuristic default config and one warning naming the command that tunes it.
    dtype ("fp16", "bf16", "fp32"): the fused blocks' (weights are cast), default the
    weights'. A module in `out` that is damaged or holds another spec is a SpecError, raised
    before anything is written or replaced. `unfuse(model)` puts the originals back."""
    _checked_model(model, "fuse")
    report = scan(model, dtype)
    out = Path(out)
    missing = check_out(report.specs, out)
    if missing:
        out.mkdir(parents=True, exist_ok=True)
    tuned = tune is not False and torch.cuda.is_available()
    for spec in missing:
        path = write_module(module_path(out, spec), spec)
        report.written.append(path)
        if tuned:
            from mlpgen.train_tune import tune_with_training
            from mlpgen.tune import TuneOptions

            tune_with_training(path, tune if isinstance(tune, TuneOptions) else TuneOptions())
    if missing and not tuned:
        commands = "; ".join(tune_hint(spec, out) for spec in missing)
        warnings.warn(
            f"mlpgen: generated {len(missing)} module(s) with the heuristic default config; "
            f"tune them on a GPU machine with: {commands}",
            stacklevel=2,
        )
    for i, r in enumerate(report.replaced):
        original = model.get_submodule(r.path)
        chain = chain_of(original, dtype)
        mod = _load(module_path(out, r.spec))
        source = chain.sequential().train(original.training)
        fused = mod.FusedMLP.from_module(source).train(original.training)
        _ORIGINALS[fused] = (original, chain)
        _set(model, r.path, fused)
        report.replaced[i] = replace(r, original=original)
    return report


def unfuse(model: nn.Module) -> list[str]:
    """Put back every block that fuse replaced in `model`, holding the fused module's current
    weights (cast to the original's dtype, on the fused module's device). Returns the paths
    restored."""
    _checked_model(model, "unfuse")
    restored = []
    for path, m in list(model.named_modules()):
        if m not in _ORIGINALS:
            continue
        original, chain = _ORIGINALS[m]
        original.to(m.linears[0].weight.device)  # the model may have moved since it was fused
        with torch.no_grad():
            for dst, src in zip(chain.linears, m.linears):
                dst.weight.copy_(src.weight)
                if dst.bias is not None:
                    dst.bias.copy_(src.bias)
        original.train(m.training)
        if path:
            _set(model, path, original)
            restored.append(path)
    return restored


def report_text(
    report: Report, out: str | os.PathLike = "tuned", missing: list[MLPSpec] | None = None
) -> str:
    """The report as `mlpgen scan` prints it: each spec with its blocks, whether `out` holds its
    module already (not in `missing`), and the command that tunes it; then what is left and
    why (the blocks left for one reason on one line)."""
    lines = []
    for spec in report.specs:
        paths = [r.path for r in report.replaced if r.spec == spec]
        where = "to generate" if missing is None or spec in missing else f"module in {out}"
        lines.append(f"{spec.name} ({where}): {len(paths)} block(s): {', '.join(paths)}")
        lines.append(f"  tune: {tune_hint(spec, Path(out))}")
    if not report.specs:
        lines.append("no MLP block to fuse")
    by_reason: dict[str, list[str]] = {}  # blocks left for one reason on one line
    for left in report.left:
        by_reason.setdefault(left.reason, []).append(left.path)
    for reason, paths in by_reason.items():
        lines.append(f"left {', '.join(paths)}: {reason}")
    return "\n".join(lines)
