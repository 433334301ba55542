"""The training kernels of a generated module, kept in the package rather than in the module.

A module's `_mlpgen("mlpgen.runtime.train")` asks `attach(globals())` for its Training object on
its first training call (`training_of(module)` from outside). That renders templates/training.j2
for the module's SPEC (both kernel families, the helpers they call), writes the source once to a
cache file named by its hash (triton reads a kernel's source from its file), imports it, and
launches its kernels for the module's autograd function and its torch.compile op: through
mlpgen.runtime's direct launch where the module has it (`_RT`), else triton's public API. Without
mlpgen the module trains as eager does (its torch path under autograd). Unless
MLPGEN_NATIVE_TRAIN=0, a step the kernels ran is recorded and later steps at its M run in
mlpgen.runtime's C++ lane (train_lane).

Layer l computes Z_l = H_{l-1} W_l^T + b_l and H_l = act(Z_l) (H_{-1} = x, H_{L-1} = y). The
backward carries dZ_l = dH_l * act'(Z_l) down the layers (dH_{l-1} = dZ_l W_l) and forms
dW_l = dZ_l^T H_{l-1} and db_l = sum over rows of dZ_l (mlpgen.training). A bucket whose tuned
step is cuBLASLt's (training.LtBackward) runs those GEMMs by mlpgen.runtime.cublaslt instead.
"""

from __future__ import annotations

import os
import warnings

import torch

from mlpgen.dispatch import pick_cell
from mlpgen.runtime import cublaslt, native, train_lane
from mlpgen.runtime.kernel_files import file_source, import_source
from mlpgen.runtime.op import size_hint
from mlpgen.space import DEFAULT_BUCKETS
from mlpgen.spec import MLPSpec
from mlpgen.training import (
    LtBackward,
    default_for,
    grad_inputs,
    one_pass_layers,
    reduction_split,
    render_training,
)

REDUCE_BLOCK = 1024  # elements a train_reduce program sums


def kernels_source(spec: MLPSpec) -> str:
    """The file of the spec's training kernels (kernel_files.file_source)."""
    from mlpgen.render import helper_sources

    kernels = render_training(spec).strip("\n")
    title = f"Training kernels of {spec.name}, rendered by mlpgen.runtime.train."
    return file_source(title, helper_sources(spec, [kernels]), kernels)


def load_kernels(spec: MLPSpec):
    """The spec's training kernels as an imported module, from its cache file."""
    return import_source("training", f"mlpgen_training_{spec.name}", kernels_source(spec))


def attach(ns: dict) -> Training:
    """The Training object of a generated module (its globals `ns`)."""
    return Training(ns)


def training_of(module) -> Training | None:
    """A loaded generated module's Training object (None where its mlpgen import failed)."""
    return module._mlpgen(__name__)


def _cdiv(a, b):
    """ceil(a / b), for ints and torch.compile's symbolic sizes alike."""
    return (a + b - 1) // b


class Training:
    """A module's training path: which config a call trains with (config), and the training
    forward and backward of that config (forward/backward for its autograd function, gradients
    for its torch.compile op)."""

    def __init__(self, ns: dict):
        self.ns = ns
        spec = MLPSpec.from_dict(ns["SPEC"])
        self.kernels = load_kernels(spec)
        self.widths = list(spec.widths)
        self.act = spec.act
        self.layers = len(spec.widths) - 1
        self.bias = spec.bias
        # per layer, what the backward reads for act': "z" (the forward stores Z), "h" (act' is
        # a function of the output, kept anyway: no Z), None (the identity)
        self.grad_inputs = grad_inputs(spec)
        # where each layer's dW and db lie in the flat gradient (params values) that every backward
        # writes (one_pass: its passes)
        self.passes, self.params = one_pass_layers(spec)
        # the flat gradient's tensors dW0, [db0,] dW1, ...: their sizes, and (layer, dW's shape
        # or None for a db, already 1-D) of each
        self.sizes = [n for p in self.passes for n in (p.n * p.k, p.n)[: 1 + spec.bias]]
        self.parts = [(i, s) for i, p in enumerate(self.passes) for s in ((p.n, p.k), None)]
        self.parts = self.parts if spec.bias else self.parts[::2]
        # default[bucket]: the config where the call's TUNED cell has no "train" value (`mlpgen
        # ... --train` stores one: a TrainConfig, or {"backward": "torch"})
        self.default = {b: default_for(spec, b).to_dict() for b in DEFAULT_BUCKETS}
        # Untuned, fp32 trains by torch ops on the GPU: its kernels' fp32 dots run in tf32, so a
        # bucket runs them only where the train search verified their gradients in full fp32
        self.gpu_trains_untuned = spec.dtype != "fp32"
        self.swapped: set[int] = set()
        # the native training lane (train_lane): the extension's state that holds this module's
        # recorded steps, and recordings made per (device, M, need_x)
        self.native_state, self.native_train = None, None
        self.attempts: dict[tuple, int] = {}
        # CUDA-graph captures: whether any cell's training step has a graph choice (only then
        # does a call ask whether its stream is capturing), the (device, M) whose graph choice
        # has run outside a capture (warm_graph_step), and whether that step is running
        tuned = ns["TUNED"].values()
        self.graph_cells = any("graph" in (c.get("train") or {}) for t in tuned for c in t.values())
        self.graph_warm: set[tuple] = set()
        self.warming = False

    # -- which config ------------------------------------------------------------------------

    def by_kernels(self, x) -> bool:
        """Whether training may run the kernels: the module's dtype on a GPU or under the
        interpreter, unless MLPGEN_TRAIN_KERNELS=0."""
        ns = self.ns
        env = os.environ.get("MLPGEN_TRAIN_KERNELS")
        return x.dtype == ns["DTYPE"] and (x.is_cuda or ns["_INTERPRET"]) and env != "0"

    def config(self, m, x, graph=None) -> dict | None:
        """The training kernels' config for m rows, or None for the torch backward: the "train"
        value of the call's TUNED cell (in a CUDA-graph capture, or with graph=True, its graph
        choice where it has one); without one, `default`'s on a GPU without a table
        (gpu_trains_untuned) or with MLPGEN_TRAIN_KERNELS=1, else the torch backward."""
        if not self.by_kernels(x):
            return None
        ns = self.ns
        if graph is None:
            graph = self.capturing(x)
        forced = os.environ.get("MLPGEN_TRAIN_KERNELS") == "1"
        memo = ("train", x.get_device(), m, forced, graph)  # in the module's cache of cells
        if memo in ns["_CONFIGS"]:
            return ns["_CONFIGS"][memo]
        key = ns["gpu_key"](x.device) if x.is_cuda else "default"
        cfg = ns["config_for"](m, key).get("train")
        if graph and cfg is not None:
            cfg = cfg.get("graph", cfg)
        untuned = (key not in ns["TUNED"] or key == "default") and (
            self.gpu_trains_untuned or not x.is_cuda
        )
        if cfg is None and (untuned or forced):
            cfg = pick_cell(self.default, m)
        if cfg is not None and cfg.get("backward") == "torch":
            cfg = None
        if cfg is not None and cfg.get("backward") == LtBackward.strategy and not x.is_cuda:
            cfg = None  # cuBLASLt: on a GPU only
        ns["_CONFIGS"][memo] = cfg
        return cfg

    def swap(self, device: int) -> None:
        """The helpers' replacements for a GPU that lacks their PTX (_SWAPS, as gpu_key swaps
        the module's own), once per device: a kernels file serves one device kind per process."""
        if device in self.swapped:
            return
        self.swapped.add(device)
        capability = torch.cuda.get_device_capability(device)
        for below, helpers in self.kernels._SWAPS:
            if capability < below:
                vars(self.kernels).update(helpers)

    def launcher(self, x, cfg):
        """launch(kernel, grid, args, caller) of a training kernel ((function, constexprs)) on
        x's device; the first `caller` args are the caller's tensors (their alignment is theirs).
        On a GPU by mlpgen.runtime's direct launch where the module has it (so no kernel
        specialises an integer argument: do_not_specialize), else by triton's public API."""
        warps, stages = cfg["num_warps"], cfg["num_stages"]
        device = x.get_device() if x.is_cuda else None
        if device is not None:
            self.swap(device)
        rt = self.ns["_RT"]
        run = self.ns["_run_public"] if rt is None or device is None else rt.run
        return lambda kernel, grid, args, caller: run(
            kernel, grid, args, warps, stages, caller, device
        )

    # -- the autograd function's forward and backward ----------------------------------------

    def apply(self, x, weights, biases) -> torch.Tensor:
        """y for a contiguous [M, in] x that autograd differentiates: by the training kernels of
        config(M), or where that is None by the module's torch path (eager's ops, eager's step)."""
        return self.run(x, self.ns["_join"](weights, biases))

    def run(self, x, params) -> torch.Tensor:
        """apply's y from the flat parameter list (w0, [b0,] w1, ...): by the native training
        lane where it holds this call's step, else by python_step."""
        y = self.native_step(x, params)
        return self.python_step(x, params) if y is None else y

    def python_step(self, x, params) -> torch.Tensor:
        """run's y where the native lane declined the call: by config(M); cuBLASLt's step only
        where every tensor is aligned as it needs and each of its GEMMs planned (lt_planned),
        else the torch path."""
        cfg = self.config(x.shape[0], x)
        if self.graph_cells and (x.get_device(), x.shape[0]) not in self.graph_warm:
            self.warm_graph_step(x, params)
        if cfg is not None and cfg.get("backward") == LtBackward.strategy:
            cfg = cfg if cublaslt.aligned([x, *params]) and self.lt_planned(x) else None
        if cfg is None:
            return self.ns["reference"](x, *self.ns["_split"](params))
        return _Function.apply(self, cfg, x, *params)

    def capturing(self, x) -> bool:
        """Whether this call is captured into a CUDA graph, asked only where a cell has a graph
        choice."""
        return self.graph_cells and x.is_cuda and torch.cuda.is_current_stream_capturing()

    def warm_graph_step(self, x, params) -> None:
        """Outside a capture, one throwaway step (forward and backward) of the call's graph
        choice where it is not the call's own, once per (device, M): a capture of the step then
        launches kernels already loaded (loading one while a graph is captured fails). The
        native lane records none of it."""
        m = x.shape[0]
        if self.capturing(x):
            return
        self.graph_warm.add((x.get_device(), m))
        cfg = self.config(m, x, graph=True)
        if cfg is self.config(m, x, graph=False):
            return
        xs, *ps = (t.detach().requires_grad_(t.requires_grad) for t in (x, *params))
        inputs = [t for t in (xs, *ps) if t.requires_grad]  # the gradients the capture takes
        self.warming = True
        try:
            with torch.enable_grad():
                if cfg is None:
                    y = self.ns["reference"](xs, *self.ns["_split"](ps))
                else:
                    y = _Function.apply(self, cfg, xs, *ps)
                torch.autograd.grad(y, inputs, torch.ones_like(y))
        finally:
            self.warming = False

    def native_step(self, x, params) -> torch.Tensor | None:
        """y of a training call by the native training lane (its autograd node attached), or
        None where the lane holds no step for it (or declines it: its checks are its own)."""
        state = self.native_state
        if state is None or self.ns["_RT"].native[1] is not state:
            return None
        if os.environ.get("MLPGEN_TRAIN_KERNELS") == "0":
            return None
        return self.native_train(state, x, params)

    def recording(self, x, cfg, params) -> train_lane.Recording | None:
        """A Recording for this training call where the native training lane may take its
        steps (the lane not switched off by MLPGEN_NATIVE_TRAIN=0, the module's direct launches
        on a GPU, every parameter requiring grad, no stream capture, kernels rather than
        cuBLASLt) and its (device, M, need_x) has had fewer than train_lane.ATTEMPTS
        recordings; else None."""
        rt = self.ns["_RT"]
        if self.warming or not train_lane.enabled() or not x.is_cuda or rt is None or not rt.fast:
            return None
        if cfg.get("backward") == LtBackward.strategy or torch.cuda.is_current_stream_capturing():
            return None
        if rt.native[1] is not self.native_state:  # the module forgot its lanes: start again
            self.native_state = None
            self.attempts.clear()
        key = (x.get_device(), x.shape[0], x.requires_grad)
        if self.attempts.get(key, 0) >= train_lane.ATTEMPTS:
            return None
        if not all(p.requires_grad for p in params):
            return None
        self.attempts[key] = self.attempts.get(key, 0) + 1
        return train_lane.Recording(key, cfg, by_inference=bool(cfg.get("recompute")))

    def adopt(self, rec: train_lane.Recording) -> None:
        """Give the native lane a step recorded whole."""
        rt = self.ns["_RT"]
        if rt is not None and train_lane.register(rt, rec):
            self.native_state, self.native_train = rt.native[1], native.build().train

    def forward(self, x, weights, biases, cfg, rec=None) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """(y, what the backward needs saved) of a training call with config cfg, for a
        contiguous [M, in] x: with "recompute" the module's inference forward and the parameters
        only, else the training forward's hidden outputs (and Z where act' reads it) as eager
        autograd saves them. rec: a Recording of the launches."""
        if cfg.get("backward") == LtBackward.strategy:
            return self.lt_forward(x, weights, biases)
        if cfg.get("recompute"):
            ns = self.ns
            # autograd records nothing in here: the inference lane takes the call where its
            # plan opened one (the native lane: no Python between the checks and the launch)
            y = ns["_lean"](x, ns["_join"](weights, biases))
            y = ns["_forward"](x, weights, biases) if y is None else y
            return y, [*weights, *(biases or [])]
        launch = self.launcher(x, cfg)
        launch = launch if rec is None else rec.wrap(launch, rec.forward)
        y, hs, zs = self.train_forward(x, weights, biases, cfg, launch)
        ys = [y] if self.grad_inputs[-1] == "h" else []  # out_act' reads y
        return y, [*weights, *hs, *ys, *[z for z in zs if z is not None]]

    def backward(self, gy, x, saved, cfg, needs, rec=None) -> tuple:
        """(dx, [dw0, db0, dw1, ...]) from forward's saved tensors, for a contiguous gy = dL/dy;
        needs: autograd's needs_input_grad of (x, *parameters) (None where not needed). rec: the
        forward's Recording, given to the native lane once the backward is recorded too."""
        dx, flat = self.flat_backward(gy, x, saved, cfg, needs, rec)
        if rec is not None:
            rec.note(gy=gy, dx=dx, flat=flat)
            self.adopt(rec)
        return dx, self.layer_grads(flat, self.need_layers(needs))

    def need_layers(self, needs) -> list[bool]:
        """Per layer, whether autograd needs its weight's or bias's gradient (needs: as
        backward's)."""
        per = 1 + self.bias
        return [any(needs[1 + i * per : 1 + (i + 1) * per]) for i in range(self.layers)]

    def flat_backward(self, gy, x, saved, cfg, needs, rec=None) -> tuple:
        """backward's (dx, flat): the flat gradient that layer_grads views."""
        layers = self.layers
        need_layer = self.need_layers(needs)
        if cfg.get("backward") == LtBackward.strategy:
            return self.lt_backward(gy, x, saved, needs[0], need_layer)
        launch = self.launcher(x, cfg)
        launch = launch if rec is None else rec.wrap(launch, rec.backward)
        if cfg.get("recompute"):
            weights = saved[:layers]
            biases = saved[layers:] if self.bias else None
            if cfg.get("one_pass"):  # the forward runs again inside the backward kernel
                return self.one_pass_backward(gy, x, weights, biases, cfg, launch, needs[0])
            # split_k's workspace held to the end: freed, its memory could come back as dx or
            # the flat gradient, which a recording would then name for it (train_lane)
            held = []
            y, hs, zs = self.train_forward(x, weights, biases, cfg, launch, held)
        else:
            weights, hs = saved[:layers], saved[layers : 2 * layers - 1]
            rest = iter(saved[2 * layers - 1 :])
            y = next(rest) if self.grad_inputs[-1] == "h" else None
            zs = [next(rest) if s == "z" else None for s in self.grad_inputs]
        return self.train_backward(gy, x, y, hs, zs, weights, cfg, launch, needs[0], need_layer)

    def gradients(self, gy, x, weights, biases, cfg, launch) -> tuple:
        """(dx, flat) at x for gy = dL/dy (flat: the parameters' gradients dW0, db0, dW1, ...
        in one tensor), the training forward run first (the torch.compile op's backward, whose
        forward saves only x), launching through `launch`."""
        if x.is_cuda:
            self.swap(x.get_device())
        if cfg.get("one_pass") and cfg.get("recompute"):
            return self.one_pass_backward(gy, x, weights, biases, cfg, launch)
        y, hs, zs = self.train_forward(x, weights, biases, cfg, launch)
        return self.train_backward(gy, x, y, hs, zs, weights, cfg, launch)

    # -- cuBLASLt's GEMMs ---------------------------------------------------------------------

    def lt_planned(self, x) -> bool:
        """Whether cuBLASLt planned every GEMM of the step at x's rows and device, once per
        both (cublaslt.plan_step); where it cannot, the step trains by the torch path, with one
        warning."""
        device, m = x.get_device(), x.shape[0]
        memo = ("lt", device, m)  # in the module's cache of picked cells
        if memo not in self.ns["_CONFIGS"]:
            try:
                cublaslt.plan_step(device, x.dtype, m, self.widths, self.act, self.bias)
                self.ns["_CONFIGS"][memo] = True
            except cublaslt.LtError as e:
                name = self.ns["__name__"]
                warnings.warn(f"{name}: {e}; training by the torch path", stacklevel=4)
                self.ns["_CONFIGS"][memo] = False
        return self.ns["_CONFIGS"][memo]

    def lt_forward(self, x, weights, biases) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """forward's (y, saved) by cuBLASLt: each hidden layer's GEMM applies the activation and
        keeps its aux (the pre-activation, or the ReLU mask) for the backward."""
        m, act = x.shape[0], self.act
        h, hs, auxes = x, [], []
        for i, w in enumerate(weights):
            y = x.new_empty((m, w.shape[0]))
            bias = biases[i] if self.bias else None
            if i == self.layers - 1:
                cublaslt.linear(y, h, w, bias)
            else:
                auxes.append(cublaslt.aux_for(act, m, w.shape[0], x))
                cublaslt.linear(y, h, w, bias, act, auxes[-1])
            hs.append(h := y)
        return y, [*weights, *hs[:-1], *auxes]

    def lt_backward(self, gy, x, saved, need_x=True, need_layer=None) -> tuple:
        """(dx, flat) from lt_forward's saved tensors, layer by layer from the top: dW_l by one
        GEMM, db_l by torch's sum over the rows (fp32 accumulation, as eager's), then dZ_{l-1} =
        (dZ_l W_l) * act'(aux) by one GEMM (act' in its epilogue). need_x, need_layer: as
        train_backward's."""
        layers, m = self.layers, x.shape[0]
        weights, hs, auxes = saved[:layers], saved[layers : 2 * layers - 1], saved[2 * layers - 1 :]
        need = [True] * layers if need_layer is None else need_layer
        gy = gy if cublaslt.aligned([gy]) else gy.clone()  # a fresh allocation is aligned
        flat = x.new_empty((self.params,))
        grads, per = self.layer_grads(flat), 1 + self.bias
        dz, dx = gy, None
        for i in reversed(range(layers)):
            if need[i]:
                cublaslt.weight_grad(grads[i * per], dz, x if i == 0 else hs[i - 1])
                if self.bias:
                    torch.sum(dz, 0, out=grads[i * per + 1])
            if i > 0:
                below = x.new_empty((m, self.widths[i]))
                cublaslt.input_grad(below, dz, weights[i], self.act, auxes[i - 1])
                dz = below
            elif need_x:
                dx = x.new_empty(x.shape)
                cublaslt.input_grad(dx, dz, weights[0])
        return dx, flat

    # -- the kernels' launches ---------------------------------------------------------------

    def train_forward(self, x, weights, biases, cfg, launch, held=None):
        """(y, hs, zs) for a contiguous [M, in] x: hs the hidden H_l (the next layers' inputs),
        zs the Z_l whose act' reads Z (else None). cfg["fused"]: every layer in one launch,
        else one per layer. held: a list given split_k's workspace (else freed on return)."""
        k = self.kernels
        m, widths = x.shape[0], self.widths
        bm, bn, bk = cfg["block_m"], cfg["block_n"], cfg["block_k"]
        hs = [x.new_empty((m, n)) for n in widths[1:]]
        zs = [
            x.new_empty((m, n)) if s == "z" else None for n, s in zip(widths[1:], self.grad_inputs)
        ]
        biases = biases if self.bias else [None] * self.layers
        if cfg.get("fused"):  # x, the parameters, then per layer [z,] h
            params = [p for pair in zip(weights, biases) for p in pair if p is not None]
            outs = [t for z, h in zip(zs, hs) for t in (z, h) if t is not None]
            grid = (_cdiv(m, bm), 1)
            launch(
                (k.train_forward_fused, (bm, bn, bk)), grid, [x, *params, *outs, m], 1 + len(params)
            )
            return hs[-1], hs[:-1], zs
        per, ws = self.split_k(x, cfg, dgrad=False)
        if held is not None:
            held.append(ws)
        for i, (src, w, b, z, h) in enumerate(zip([x, *hs], weights, biases, zs, hs)):
            kk, n, last = widths[i], widths[i + 1], i == self.layers - 1
            grid = (_cdiv(m, bm) * _cdiv(n, bn), 1)
            bias = [b] if self.bias else []
            z = h if z is None else z  # h: an unused placeholder
            if ws is not None and per[i] < kk:  # split_k: the ranges' partials, then their sum
                ranges = _cdiv(kk, per[i])
                partial = (k.train_forward_partial, (kk, n, bm, bn, bk))
                launch(partial, (grid[0], ranges), [src, w, ws, m, per[i] // bk], 2)
                args = [*bias, ws, z, h, m, ranges]
                launch((k.train_forward_sum, (n, last, bm, bn)), grid, args, self.bias)
                continue
            tiles = (kk, n, last, bm, bn, bk)
            launch((k.train_forward, tiles), grid, [src, w, *bias, z, h, m], 2 + self.bias)
        return hs[-1], hs[:-1], zs

    def train_backward(self, gy, x, y, hs, zs, weights, cfg, launch, need_x=True, need_layer=None):
        """(dx, flat) from what train_forward returned, for a contiguous gy; flat: the flat
        gradient, which layer_grads views as [dW0, db0, dW1, ...].
        First every dZ_l, from the top: dZ_l = dH_l * act'(Z_l), dH_{l-1} = dZ_l W_l (one
        launch where cfg["fused"]); then per layer dW_l = dZ_l^T H_{l-1} and db_l = dZ_l summed
        over rows, the rows cut into cfg["split"] ranges whose fp32 partials train_reduce sums
        in order (deterministic). need_x False: dx is None; need_layer[l] False: layer l's part
        of flat is left unwritten."""
        if cfg.get("one_pass"):
            return self.one_pass_backward(gy, x, weights, None, cfg, launch, need_x, (y, hs, zs))
        k, widths, layers = self.kernels, self.widths, self.layers
        m = x.shape[0]
        bm, bn, bk = cfg["block_m"], cfg["block_n"], cfg["block_k"]
        outputs = [*hs, y]
        saved = [{"z": z, "h": h, None: None}[s] for s, z, h in zip(self.grad_inputs, zs, outputs)]
        dzs = [gy.new_empty((m, n)) for n in widths[1:-1]] + [gy]
        dx = x.new_empty(x.shape) if need_x else None
        if saved[-1] is not None:
            dzs[-1] = gy.new_empty(gy.shape)  # the last layer's dZ = dL/dy * out_act'
        if cfg.get("fused"):
            top = [dzs[-1]] if saved[-1] is not None else []
            args = [gy, *weights, *[s for s in saved if s is not None], *dzs[:-1], *top]
            args += [dzs[0] if dx is None else dx, m]  # dzs[0]: an unused placeholder
            kernel = (k.train_backward_fused, (need_x, bm, bn, bk))
            launch(kernel, (_cdiv(m, bm), 1), args, 1 + layers)
        else:
            if saved[-1] is not None:
                grid = (_cdiv(m, bm), _cdiv(widths[-1], bn))
                launch((k.train_dout, (widths[-1], bm, bn)), grid, [gy, saved[-1], dzs[-1], m], 1)
            per, ws = self.split_k(x, cfg, dgrad=True)
            for i in reversed(range(layers)):  # dH_{l-1}, times act' of the layer below
                dh = dzs[i - 1] if i > 0 else dx
                if dh is None:
                    continue
                s = saved[i - 1] if i > 0 else None
                kk, n = widths[i], widths[i + 1]
                grid = (_cdiv(m, bm) * _cdiv(kk, bn), 1)
                if ws is not None and per[i] < n:  # split_k: the ranges' partials, then their sum
                    ranges = _cdiv(n, per[i])
                    partial = (k.train_dgrad_partial, (kk, n, bm, bn, bk))
                    launch(partial, (grid[0], ranges), [dzs[i], weights[i], ws, m, per[i] // bk], 2)
                    kernel = (k.train_dgrad_sum, (kk, s is not None, bm, bn))
                    launch(kernel, grid, [ws, dh if s is None else s, dh, m, ranges], 0)
                    continue
                kernel = (k.train_dgrad, (kk, n, s is not None, bm, bn, bk))
                launch(kernel, grid, [dzs[i], weights[i], dh if s is None else s, dh, m], 2)
        splits = max(1, min(cfg["split"], _cdiv(size_hint(m), bm)))
        rows = _cdiv(_cdiv(m, splits), bm) * bm  # a split's rows: whole row tiles
        need = [True] * layers if need_layer is None else need_layer
        partial = splits > 1
        flat = x.new_empty((self.params,))
        # the kernels write each layer's dW and db at its offsets of the flat gradient, or of a
        # split's row of the fp32 partials, which one train_reduce then sums into it
        target = x.new_empty((splits, self.params), dtype=torch.float32) if partial else flat
        tiles = [_cdiv(n, bn) * (_cdiv(kk, bk) + self.bias) for kk, n in zip(widths, widths[1:])]
        if all(need):  # every layer's tiles in one launch: each dZ and input first
            args = [t for pair in zip(dzs, [x, *hs]) for t in pair]
            kernel = (k.train_wgrad_fused, (partial, bm, bn, bk))
            launch(kernel, (sum(tiles), splits), [*args, target, m, rows], 2 * layers)
        else:
            for i, (h, g, p) in enumerate(zip([x, *hs], dzs, self.passes)):
                if need[i]:
                    kernel = (k.train_wgrad, (p.k, p.n, p.w_at, p.b_at, partial, bm, bn, bk))
                    launch(kernel, (tiles[i], splits), [g, h, target, m, rows], 2)
        if partial:
            self.reduce(target, flat, launch)
        return dx, flat

    def split_k(self, x, cfg, dgrad: bool) -> tuple[list[int] | None, torch.Tensor | None]:
        """(per layer, the elements of its reduction a program sums; the fp32 workspace of
        every split layer's partials) for a pass of the launches per layer: the forward, or
        with dgrad the input gradients. (None, None) where cfg has no split_k or no layer
        splits (reduction_split)."""
        if not cfg.get("split_k"):
            return None, None
        m, tiles = size_hint(x.shape[0]), (cfg["block_m"], cfg["block_n"], cfg["block_k"])
        cuts = [(n, k) if dgrad else (k, n) for k, n in zip(self.widths, self.widths[1:])]
        per = [reduction_split(m, out, k, *tiles) for k, out in cuts]
        planes = [_cdiv(k, p) * out for (k, out), p in zip(cuts, per) if p < k]
        if not planes:
            return None, None
        return per, x.new_empty((x.shape[0] * max(planes),), dtype=torch.float32)

    def reduce(self, partials, flat, launch) -> None:
        """flat = the rows of the fp32 partials [rows, params] summed in row order."""
        grid = (_cdiv(self.params, REDUCE_BLOCK), 1)
        args = [partials, flat, partials.shape[0]]
        launch((self.kernels.train_reduce, (self.params, REDUCE_BLOCK)), grid, args, 0)

    def layer_grads(self, flat, need=None) -> list:
        """[dW0, db0, dW1, ...] as views of the flat gradient (None where need[layer] is False;
        need None: every layer's)."""
        parts = flat.split_with_sizes(self.sizes)  # one call for all
        return [
            None if need is not None and not need[i] else g if shape is None else g.view(shape)
            for g, (i, shape) in zip(parts, self.parts)
        ]

    def one_pass_backward(self, gy, x, weights, biases, cfg, launch, need_x=True, saved=None):
        """(dx, flat) by the one_pass kernel: cfg["split"] programs, each over whole row tiles,
        carry the dZ down every layer in registers and write dx and their partial dW, db (fp32,
        one row each); train_reduce sums the rows in program order into the flat gradient.
        saved: train_forward's (y, hs, zs), which the kernel reads; None: the kernel runs the
        forward itself (recompute, from the biases)."""
        k, m, bm = self.kernels, x.shape[0], cfg["block_m"]
        programs = max(1, min(cfg["split"], _cdiv(size_hint(m), bm)))
        rows = _cdiv(_cdiv(m, programs), bm) * bm
        dx = x.new_empty(x.shape) if need_x else None
        partials = x.new_empty((programs, self.params), dtype=torch.float32)
        if saved is None:  # the caller's parameters
            inputs = self.ns["_join"](weights, biases)
            kernel, caller = k.train_backward_one_pass_recompute, 2 + len(inputs)
        else:  # the weights, then what train_forward saved
            y, hs, zs = saved
            top = partials if y is None else y  # y where out_act' reads it; else unread
            inputs = [*weights, *hs, top, *[z for z in zs if z is not None]]
            kernel, caller = k.train_backward_one_pass, 2 + self.layers
        args = [gy, x, *inputs, x if dx is None else dx, partials, m, rows]  # x: unread dx
        launch((kernel, (need_x, bm)), (programs, 1), args, caller)
        flat = x.new_empty((self.params,))
        self.reduce(partials, flat, launch)
        return dx, flat


class _Function(torch.autograd.Function):
    """Training by a module's kernels (Training.apply): the forward saves what the backward
    kernels need."""

    @staticmethod
    def forward(ctx, training, cfg, x, *params):
        ctx.training, ctx.cfg = training, cfg
        # autograd records nothing in here: the inputs need no detach
        weights, biases = training.ns["_split"](params)
        ctx.rec = training.recording(x, cfg, params)
        y, saved = training.forward(x, weights, biases, cfg, ctx.rec)
        if ctx.rec is not None:
            ctx.rec.note(x=x, y=y, params=params, saved=saved)
        ctx.save_for_backward(x, *saved)
        return y

    @staticmethod
    def backward(ctx, gy):
        if torch.is_grad_enabled():
            raise RuntimeError(
                f"{ctx.training.ns['__name__']}: double backward (create_graph=True) is not "
                f"supported by the training kernels; for higher-order gradients use "
                f"FusedMLP.to_module()'s nn.Sequential"
            )
        x, *saved = ctx.saved_tensors
        needs = ctx.needs_input_grad[2:]
        rec, ctx.rec = ctx.rec, None  # recorded once
        gx, grads = ctx.training.backward(gy.contiguous(), x, saved, ctx.cfg, needs, rec)
        return None, None, gx, *grads
