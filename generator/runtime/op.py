"""A generated module's torch.compile custom op: its forward and backward as torch.library
triton_ops, so that torch.compile(fullgraph=True) sees one op (and CUDA-graph capture of a whole
training step works). `attach(ns)` makes them from the module's globals `ns` (its rules,
kernels, launches and training functions) once per process and module source. A module without
mlpgen registers none: torch.compile then traces its mlp() itself."""

import hashlib

import torch

from mlpgen.activations import ACTIVATIONS


def size_hint(m):
    """A concrete row count to choose a config by. Under torch.compile with dynamic shapes M is
    symbolic: take the size the graph was traced with (every config is correct for every M)."""
    if isinstance(m, int):
        return m
    hint = getattr(getattr(m, "node", None), "hint", None)
    return hint if isinstance(hint, int) else 1024


def torch_gradients(ns, gy, x, params):
    """(dx, [dw0, db0, dw1, ...]) of the module (globals `ns`) at x for gy = dL/dy by torch ops:
    the pre-activations recomputed as nn.Sequential computes them, aten's backward ops after (the
    activation table's grad_fn), so the gradients are eager's. The op's backward where no
    training kernels run: it cannot call autograd, which torch.compile traces through."""
    weights, biases = ns["_split"](params)
    act = ACTIVATIONS[ns["SPEC"]["act"]]
    out_act = ACTIVATIONS[ns["SPEC"]["out_act"]]
    hs, zs = [x], []
    for i, w in enumerate(weights):
        zs.append(torch.nn.functional.linear(hs[-1], w, None if biases is None else biases[i]))
        if i < len(weights) - 1:
            hs.append(act.torch_fn(zs[-1]))
    g, grads = out_act.grad_fn(gy, zs.pop()), []
    for i in reversed(range(len(weights))):  # popping frees what the lower layers do not need
        if biases is not None:
            grads.append(g.sum(0))
        grads.append(g.t().matmul(hs.pop()))
        g = act.grad_fn(g.matmul(weights[i]), zs.pop()) if i > 0 else g.matmul(weights[0])
    return g, grads[::-1]


def traced_launcher(x, warps, stages):
    """launch(kernel, grid, args, caller=0) inside a custom op that torch.compile traces: the
    kernel (KERNELS' (function, tiles)) through torch.library.wrap_triton on x's device."""

    def launch(kernel, grid, args, caller=0):
        function, tiles = kernel
        with torch.cuda.device(x.device):
            wrapped = torch.library.wrap_triton(function)
            wrapped[grid](*args, *tiles, num_warps=warps, num_stages=stages)

    return launch


def op_launch(ns, cfg, x, y, params, m):
    """(grid, kernel arguments) of a one-launch cell inside the op: fresh workspace buffers,
    the grid for M (persist: for the traced size)."""
    kind = ns["launch_kind"](cfg)
    buffers = ns.get("_WORKSPACE_BUFFERS", {}).get(kind)
    # a row grid follows the (symbolic) M; persist's grid-stride loop takes any resident grid
    grid = ns.get("_GRIDS", {}).get(kind, ns["_grid_rows"])
    grid = grid(cfg, size_hint(m) if kind == "persist" else m, x)
    return grid, [x, y, *params, *(buffers(x, m) if buffers else ()), m]


def source_hash(ns) -> str:
    """Short hash of the module's file: a re-tuned or re-generated module registers a new op, so
    neither a reload nor torch.compile's caches can run an older module's kernels under its
    name."""
    try:
        source = ns["__loader__"].get_source(ns["__name__"])
    except Exception:  # no loader, or one without sources: hash the tables instead
        source = None
    return hashlib.sha256((source or repr((ns["SPEC"], ns["TUNED"]))).encode()).hexdigest()[:8]


def attach(ns):
    """(qualified name, OpOverload, the backward's OpOverload) of the module's triton_ops,
    registered once per process and module source (importing the same file again reuses them);
    Nones on a torch without triton_op (< 2.6)."""
    if not hasattr(torch.library, "triton_op"):
        return None, None, None
    split = ns["_split"]

    def fused_op(x: torch.Tensor, params: list[torch.Tensor]) -> torch.Tensor:
        """The forward as torch.compile sees it: only torch ops and the wrapped Triton kernels.
        Every buffer is allocated here (a module-global workspace would be captured by tracing)
        and the grid follows the traced size (a persistent grid walks its tiles in a grid-stride
        loop, so any co-resident grid is correct for every M). x: contiguous [M, in], M > 0."""
        weights, biases = split(params)
        if not x.is_cuda or x.dtype != ns["DTYPE"]:
            return ns["reference"](x, weights, biases)
        m = x.shape[0]
        cell = ns["config_for"](size_hint(m), ns["gpu_key"](x.device))
        cfg = ns["_fallback"](cell, size_hint(m), x) if "_fallback" in ns else cell
        strategy = ns["launch_kind"](cfg)
        if strategy in ns.get("_OP_TORCH", ()):
            return ns["reference"](x, weights, biases)
        if strategy in ns["_TORCH_PATHS"]:
            return ns["_TORCH_PATHS"][strategy](x, weights, biases)
        warps, stages = cfg["num_warps"], cfg["num_stages"]
        launch = traced_launcher(x, warps, stages)
        y = torch.empty((m, ns["WIDTHS"][-1]), dtype=x.dtype, device=x.device)
        launch(ns["KERNELS"][cfg["kernel"]], *op_launch(ns, cfg, x, y, params, m))
        return y

    def fused_op_grads(
        gy: torch.Tensor, x: torch.Tensor, params: list[torch.Tensor]
    ) -> list[torch.Tensor]:
        """The op's backward as torch.compile sees it, its own custom op: [dx, flat] at x for
        gy = dL/dy, flat the parameters' gradients [dw0, db0, ...] flattened into one tensor (a
        custom op's outputs may not alias each other, so the views are taken outside it). The
        training kernels (mlpgen.runtime.train) on the GPU (the op's forward saved only x: the
        training forward recomputes what they need); the torch path elsewhere, like fused_op
        (the interpreter cannot run a kernel on the fake tensors that tracing passes)."""
        weights, biases = split(params)
        training = ns["_mlpgen"]("mlpgen.runtime.train")
        cfg = training.config(size_hint(x.shape[0]), x) if x.is_cuda else None
        if cfg is None or "backward" in cfg:  # cuBLASLt's step: not through wrap_triton
            dx, grads = torch_gradients(ns, gy, x, params)
            return [dx, torch.cat([g.reshape(-1) for g in grads])]
        launch = traced_launcher(x, cfg["num_warps"], cfg["num_stages"])
        return list(training.gradients(gy, x, weights, biases, cfg, launch))

    def setup_context(ctx, inputs, output):
        x, params = inputs
        ctx.save_for_backward(x, *params)

    name = f"{ns['NAME']}_{source_hash(ns)}"
    ops = torch.ops.mlpgen

    def backward(ctx, gy):
        x, *params = ctx.saved_tensors
        dx, flat = getattr(ops, f"{name}_backward").default(gy.contiguous(), x, params)
        return dx, ns["_mlpgen"]("mlpgen.runtime.train").layer_grads(flat)

    if not hasattr(ops, name):
        torch.library.triton_op(f"mlpgen::{name}_backward", fused_op_grads, mutates_args=())
        op = torch.library.triton_op(f"mlpgen::{name}", fused_op, mutates_args=())
        op.register_autograd(backward, setup_context=setup_context)
    return f"mlpgen::{name}", getattr(ops, name).default, getattr(ops, f"{name}_backward").default
