"""The native lane: native_lane.cpp (a file of this package) built once per machine with the
system's C++ compiler against torch's and triton's headers, and the lanes a ModuleRuntime gives
it (one kernel launch, or the epilogue strategy's cuBLASLt GEMMs with fused epilogues; the
training steps train_lane records).
MLPGEN_NATIVE=0 skips it; a failed build warns once and calls stay in Python."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from pathlib import Path

import torch
import triton

from mlpgen.runtime.kernel_files import cache_dir
from mlpgen.runtime.versions import direct_launch, unsupported

SOURCE = Path(__file__).with_name("native_lane.cpp")
_BUILT: dict[str, object] = {}  # "module": the built extension (None: unavailable)
_INT_TYPES = {"i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64"}
# cuBLASLt's epilogues (cublasLtEpilogue_t): the hidden layers' bias and activation (as
# torch._addmm_activation asks for them), and a last layer's bias
LT_EPILOGUES = {"relu": 6, "gelu_tanh": 36}  # RELU_BIAS, GELU_BIAS (tanh's approximation)
LT_BIAS, LT_PLAIN = 4, 1
LT_WORKSPACE_BYTES = 4 << 20


def command(source: str, target: str) -> list[str]:
    """The compiler's command line: torch's headers and libraries, triton's cuda.h (the driver
    API's types, as triton's own launcher uses them), this Python's headers."""
    torch_dir = os.path.dirname(torch.__file__)
    lib = os.path.join(torch_dir, "lib")
    includes = (
        sysconfig.get_paths()["include"],
        os.path.join(torch_dir, "include"),
        os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "include"),
    )
    abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True))
    return [
        *shlex.split(os.environ.get("CXX") or "c++"),
        "-O2", "-shared", "-fPIC", "-std=c++20", "-w", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
        *(f"-I{d}" for d in includes),
        source, "-o", target,
        f"-L{lib}", "-lc10", "-ltorch_cpu", "-ltorch_python", f"-Wl,-rpath,{lib}", "-ldl",
    ]  # fmt: skip


def build():
    """The native lane's extension, built on first use into $MLPGEN_CACHE (default
    ~/.cache/mlpgen)/native under a name that hashes its source, torch, triton and Python (once
    per machine, shared by every generated module), or None: MLPGEN_NATIVE=0, a triton whose
    launch it does not know, or a failed build (one warning; calls then take the Python lane)."""
    if "module" in _BUILT:
        return _BUILT["module"]
    _BUILT["module"] = None
    if os.environ.get("MLPGEN_NATIVE", "1") == "0" or unsupported("native") is not None:
        return None
    text = SOURCE.read_text()
    key = hashlib.sha256(
        "\0".join((text, torch.__version__, triton.__version__, sys.version)).encode()
    ).hexdigest()[:16]
    directory = cache_dir("native")
    target = os.path.join(
        directory, f"mlpgen_runtime_native_{key}{sysconfig.get_config_var('EXT_SUFFIX')}"
    )
    try:
        if not os.path.exists(target):
            os.makedirs(directory, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=directory) as tmp:
                built = os.path.join(tmp, os.path.basename(target))
                done = subprocess.run(
                    command(str(SOURCE), built), capture_output=True, text=True, timeout=600
                )
                if done.returncode != 0:
                    lines = (done.stderr or done.stdout).strip().splitlines() or ["no output"]
                    raise RuntimeError(f"the compiler failed: {lines[-1]}")
                os.replace(built, target)  # atomic: concurrent builds leave one whole file
        spec = importlib.util.spec_from_file_location("mlpgen_runtime_native", target)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except (OSError, RuntimeError, ImportError, subprocess.SubprocessError) as e:
        warnings.warn(
            f"mlpgen: the native lane could not be built ({e}); calls take the Python lane "
            f"(MLPGEN_NATIVE=0 skips the build)",
            stacklevel=2,
        )
        return None
    _BUILT["module"] = module
    return module


def arguments(compiled, args, roles):
    """(sources, values) of the kernel arguments that the compiled kernel takes (triton drops
    those it specialised to constants), for native_lane.cpp's add: the first len(roles) from
    `roles` (the input -2, the output -3, parameter i >= 0, or -1: fixed, its value in args),
    the others fixed; or None where an argument is not a pointer or an integer."""
    signature = list(getattr(getattr(compiled, "src", None), "signature", {}).values())
    if len(signature) != len(args):
        return None
    sources, values = [], []
    for i, (kind, value) in enumerate(zip(signature, args)):
        if kind == "constexpr":
            continue
        if not isinstance(kind, str) or not (kind.startswith("*") or kind in _INT_TYPES):
            return None
        source = roles[i] if i < len(roles) else -1
        if source != -1:
            sources.append(source)
            values.append(0)
        elif isinstance(value, int):
            sources.append(-1)
            values.append(value)
        else:
            return None
    return sources, values


def launch_of(compiled, args, roles):
    """What native_lane.cpp's add and extend take after (state, device, m) for one kernel
    launched by the verified C launch without scratch, except the grid and what it keeps
    alive; or None where the lane cannot launch it."""
    found = arguments(compiled, args, roles)
    meta = compiled.packed_metadata  # (warps, CTAs a cluster, shared memory bytes)
    if found is None or not (isinstance(meta, tuple) and len(meta) == 3):
        return None
    run = compiled.run
    if direct_launch(run)[0] is run:  # not the verified C launch
        return None
    warps, ctas, shared = meta
    flags = (bool(run.launch_cooperative_grid), bool(run.launch_pdl))
    return compiled.function, warps, shared, ctas, *flags, *found


def state_of(rt):
    """(the built extension, the module's state in it), made on first use; (None, None) where
    the extension is not available."""
    module = build()
    if module is None:
        return None, None
    if rt.native[1] is None:
        numels, rows = [], []  # of w0, [b0,] w1, ...: the shapes the lane accepts
        for k, n in zip(rt.widths[:-1], rt.widths[1:]):
            numels += [n * k, n] if rt.bias else [n * k]
            rows += [n, 0] if rt.bias else [n]
        state = module.state(
            torch.empty(0, dtype=rt.dtype), rt.widths[0], rt.widths[-1], numels, rows,
            rt.ns["_GRAPH_CELLS"],
        )  # fmt: skip
        rt.native[:] = [None, state]
    return module, rt.native[1]


def _roles(rt):
    """A one-launch kernel's x, y and parameters, as `arguments` numbers them."""
    return (-2, -3, *range(rt.caller - 2))


def add_kernel(rt, lane, compiled, m: int) -> None:
    """Give the native lane `lane` (a kernel lane of the verified C launch) for (device, m)."""
    launch = launch_of(compiled, [0] * rt.caller + lane.tail, _roles(rt))
    if launch is None:
        return
    module, state = state_of(rt)
    if module is None:
        return
    function, warps, shared, ctas, coop, pdl, sources, values = launch
    module.add(
        state, lane.device, m, function, lane.g0, lane.g1, warps, shared, ctas, coop, pdl,
        sources, values, lane.keep,
    )  # fmt: skip
    rt.native[0] = module.call


def _lt_workspace(rt, x):
    """The device's cuBLASLt workspace for the GEMMs (shared by the module's lanes)."""
    index = x.get_device()
    if index not in rt.lt_workspaces:
        rt.lt_workspaces[index] = torch.empty(
            LT_WORKSPACE_BYTES, dtype=torch.uint8, device=x.device
        )
    return rt.lt_workspaces[index]


def _gemm(rt, module, state, extend, plan, m, layer, source, epilogue, keep):
    """native_lane.cpp's gemm for layer `layer` on m rows: it reads the call's x (source None)
    or the hidden buffer `source`, writes y (the last layer) or keep[0][layer], with the layer's
    weight and (where the epilogue adds one) bias."""
    per = 2 if rt.bias else 1
    k, n = rt.widths[layer], rt.widths[layer + 1]
    last = layer == rt.layers - 1
    out = 0 if last else keep[0][layer].data_ptr()
    bias = layer * per + 1 if epilogue & LT_BIAS else -1
    module.gemm(
        state, extend, plan.device, m, k, n, -2 if source is None else -1,
        0 if source is None else source.data_ptr(), -3 if last else -1, out, layer * per, bias,
        epilogue, keep[1], keep,
    )  # fmt: skip


def add_layers(rt, plan, x2d) -> None:
    """Give the native lane the epilogue strategy's layers for (device, M): each layer a
    cuBLASLt GEMM with its bias (and activation) in the epilogue, as F.linear and
    torch._addmm_activation compute them; the hidden activations in the runtime's buffers, so
    that a call allocates only its output. Calls under stream capture stay in Python (the lane
    declines them)."""
    m = x2d.shape[0]
    module, state = state_of(rt)
    if module is None:
        return
    keep = (rt.hidden_buffers(x2d, m), _lt_workspace(rt, x2d))
    try:
        for layer in range(rt.layers):
            source = keep[0][layer - 1] if layer > 0 else None
            if layer < rt.layers - 1:
                epilogue = LT_EPILOGUES[rt.ns["SPEC"]["act"]]
            else:
                epilogue = LT_BIAS if rt.bias else LT_PLAIN
            _gemm(rt, module, state, layer > 0, plan, m, layer, source, epilogue, keep)
    except (ValueError, RuntimeError, KeyError, TypeError):  # refused: no lane runs a part
        module.remove(state, plan.device, m)
        return
    rt.native[0] = module.call
