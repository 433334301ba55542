"""ModuleRuntime: a generated module's fast launches (triton 3.6's internals; see LANES).

The module keeps everything that decides what runs (TUNED, its rules, grids, workspace layouts,
the public launch); this object runs it faster:
- `forward`, `launch`: a Plan per (device, M, capturing), resolved once and cached, with the
  device's workspace shared by the calls (each launch leaves it fit for the next);
- `run`: after a kernel's first launch through triton, its compiled binary is launched directly
  (`CompiledKernel.run`), skipping the JIT dispatcher's argument binding and cache lookup;
  cluster kernels are compiled without launching and launched as clusters with the receive
  buffer past triton's own shared memory (opted in with cuFuncSetAttribute).
- `lean`: an inference call's whole path once its plan has run: a dict lookup for the lane of
  (device, M), parameter checks only when the parameter objects change, and the launch with the
  tensors' addresses as ints; the native lane (native.py) does the same in C++.
"""

from __future__ import annotations

import copy
import ctypes
import functools
import operator
import weakref

import torch

from mlpgen.runtime import native
from mlpgen.runtime.versions import direct_launch, unsupported

SMEM_DEFAULT = 48 * 1024  # dynamic shared memory a launch gets without opting in
_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8  # cuda.h's CUfunction_attribute

# the torch.cuda calls under current_device() and current_stream(), without their wrappers
_current_device = getattr(torch._C, "_cuda_getDevice", None)
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
_is, _deref = operator.is_, weakref.ref.__call__


_NN = torch.nn.modules.module  # where nn.Module keeps the hooks registered for every module
_TRACING = getattr(torch._C, "_get_tracing_state", None)
# FusedMLP.__call__ skips nn.Module's only where this torch has every state it checks
_DIRECT_CALL = (
    _TRACING is not None
    and hasattr(torch.nn.Module, "_compiled_call_impl")
    and all(
        hasattr(_NN, f"_global_{kind}")
        for kind in ("forward_hooks", "forward_pre_hooks", "backward_hooks", "backward_pre_hooks")
    )
)


def fused_call(cls, module_call):
    """A generated FusedMLP's __call__: forward's work, module_call(self._modules, x, out, True),
    directly where nn.Module.__call__ would do nothing but call forward (no hook on this module
    or on every module, no torch.jit tracing, no module.compile(), not under torch.compile,
    forward not a subclass's), which saves about a tenth of a small call's host time; otherwise
    nn.Module.__call__ itself (with out only where given: hooks see the arguments as given)."""
    forward, call = cls.forward, torch.nn.Module.__call__

    def __call__(self, x, *, out=None):
        if (
            not torch.compiler.is_compiling()
            and type(self).forward is forward  # a subclass's own forward is called
            and self._compiled_call_impl is None
            and not (
                self._forward_hooks
                or self._forward_pre_hooks
                or self._backward_hooks
                or self._backward_pre_hooks
                or _NN._global_forward_hooks
                or _NN._global_forward_pre_hooks
                or _NN._global_backward_hooks
                or _NN._global_backward_pre_hooks
                or _TRACING()
            )
        ):
            return module_call(self._modules, x, out, True)
        return call(self, x) if out is None else call(self, x, out=out)

    return __call__


@functools.cache
def cluster_metadata_known() -> bool:
    """Whether this triton packs a kernel's launch metadata as (num_warps, num_ctas, shared),
    the layout cluster_compiled rewrites."""
    if unsupported("cluster") is not None:
        return False
    try:
        from triton.backends.nvidia.compiler import CUDABackend

        probe = type("Meta", (), {"num_warps": 4, "num_ctas": 2, "shared": 8})()
        return tuple(CUDABackend.pack_metadata(None, probe)) == (4, 2, 8)
    except Exception:  # another backend layout, a triton without it
        return False


def opt_in_shared(kernel, function, nbytes: int) -> None:
    """Let a loaded kernel launch with nbytes of dynamic shared memory: past 48 KiB a launch
    must opt in (as triton's loader does for kernels of its own that need it), up to the
    device's opt-in limit (227 KiB on the H200)."""
    rc = ctypes.CDLL("libcuda.so.1").cuFuncSetAttribute(
        ctypes.c_void_p(function),
        _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        ctypes.c_int(nbytes),
    )
    if rc != 0:  # CUDA_ERROR_INVALID_VALUE: over the device's limit
        raise RuntimeError(
            f"mlpgen: {kernel.__name__} needs {nbytes} bytes of shared memory (CUresult {rc})"
        )


def launchable(compiled) -> bool:
    """Whether a compiled kernel has what the direct launch uses."""
    return hasattr(compiled, "packed_metadata") and hasattr(compiled, "function")


class Linked:
    """A compiled kernel launched with programmatic dependent launch. Triton's launch_pdl option
    changes the launch (an attribute of cuLaunchKernelEx), not the binary, so a config and its
    PDL variant share one compile: this is the compiled kernel with a copy of its launcher whose
    launch_pdl is set (the tuner compiles no PDL variant: workers.Compiler)."""

    __slots__ = ("compiled", "src", "function", "packed_metadata", "run")

    def __init__(self, compiled):
        self.compiled = compiled  # holds the loaded binary
        self.src, self.function = compiled.src, compiled.function
        self.packed_metadata = compiled.packed_metadata
        self.run = copy.copy(compiled.run)
        self.run.launch_pdl = True


def cluster_compiled(kernel, ctas, buffer, grid, args, num_warps, num_stages):
    """A cluster kernel compiled for these arguments without launching it, its launch metadata
    set to its cluster size (triton 3.6 launches gridDimX = grid x num_ctas) and to triton's
    shared memory plus the receive buffer, which the kernel finds at the end."""
    compiled = kernel.warmup(*args, grid=grid, num_warps=num_warps, num_stages=num_stages)
    getattr(compiled, "_init_handles", lambda: None)()  # loads it: function, launcher
    meta = getattr(compiled, "packed_metadata", None)
    if not (isinstance(meta, tuple) and len(meta) == 3 and meta[1] == 1):
        raise RuntimeError(f"mlpgen: triton's launch metadata {meta!r} is not (warps, 1, shared)")
    shared = (meta[2] + 15) // 16 * 16 + buffer  # the buffer 16-byte aligned: 16-byte stores
    if shared > SMEM_DEFAULT:  # triton opts in only where its own use passes the default
        opt_in_shared(kernel, compiled.function, shared)
    # a copy: warmup hands out triton's cached kernel, which a later call must find unchanged
    compiled = copy.copy(compiled)
    compiled.packed_metadata = (meta[0], ctas, shared)
    return compiled


class Lane:
    """What a calls plan's inference calls need beyond their checks, resolved once. A kernel
    lane: what launches the compiled kernel (`run`: its launcher, or the C launch) with the
    arguments before the tensors (`head`), grid, workspace and M arguments (`tail`), and a
    template for the output; a call passes the tensors' addresses as ints, which the launch
    takes as they are (given tensors, it would call data_ptr() and check each pointer again).
    A plan lane (`call`) runs the module's plan itself. Either keeps the last parameters that
    passed its checks (`checked`: their addresses, `held`: weakrefs)."""

    __slots__ = (
        "call", "run", "head", "g0", "g1", "tail", "like", "device", "keep", "checked", "held"
    )  # fmt: skip

    def __init__(self):
        self.call = self.run = None
        self.checked, self.held = [], ()


OWN_WORKSPACE_MAX = 64 << 20  # larger workspaces are looked up per call, not held by a plan


def workspace_bytes(buffers, m: int) -> int:
    """Bytes of a module's workspace for m rows (buffers: its _WORKSPACE_BUFFERS entry), from
    its buffers made on the meta device (nothing allocated)."""
    return sum(t.nbytes for t in buffers(torch.empty(0, device="meta"), m))


class Plan:
    """Everything a call of a generated module needs for one (device, M, capturing), resolved
    once from the cell `cfg` by the module's own rules (its globals `ns`): the cell that runs
    here (the module's _fallback), its kernel or torch path, grid, launch options
    and workspace. A calls plan holds the device's shared workspace; a CUDA-graph plan made
    outside a capture its own (zeroed once: every launch leaves it zero, so a graph captures only
    the kernel); one made during a capture gets fresh buffers each launch (execute)."""

    __slots__ = (
        "cfg", "strategy", "torch_path", "kernel", "grid", "num_warps", "num_stages", "ready",
        "device", "pdl", "ws", "lane",
    )  # fmt: skip

    def __init__(self, rt, cfg, m, x, shared_ws=True, capturing=False):
        ns = rt.ns
        self.device = x.get_device() if x.is_cuda else None
        if self.device is not None:
            ns["gpu_key"](x.device)  # helpers fit the GPU's architecture before compiling
        self.cfg = cfg = ns["_fallback"](cfg, m, x) if "_fallback" in ns else cfg
        self.strategy = strategy = ns["launch_kind"](cfg)
        self.torch_path = ns["_TORCH_PATHS"].get(strategy)
        self.pdl = ns["_PDL"][0] and bool(cfg.get("pdl"))  # the first kernel launched with PDL
        if strategy == "cluster":  # its kernel is the runtime's, rendered on first use
            from mlpgen.runtime.cluster import provide

            provide(ns, cfg)
        self.kernel = None if self.torch_path else ns["KERNELS"][cfg["kernel"]]
        self.ready = ns.get("_READY", {}).get(strategy)
        self.lane = None  # the runtime's lane for this plan's calls
        self.grid = self.num_warps = self.num_stages = None
        if self.torch_path is None:
            grid = ns.get("_GRIDS", {}).get(strategy, ns["_grid_rows"])
            self.grid = grid(cfg, m, x)
            self.num_warps, self.num_stages = cfg["num_warps"], cfg["num_stages"]
        self.ws = None
        buffers = ns.get("_WORKSPACE_BUFFERS", {}).get(strategy)
        small = buffers is not None and workspace_bytes(buffers, m) <= OWN_WORKSPACE_MAX
        if small and not capturing:
            self.ws = rt.shared_workspace(strategy, x, m) if shared_ws else buffers(x, m)


class ModuleRuntime:
    """The fast launches of one generated module, whose globals are `ns` (see the module's
    _attach_runtime for the names it provides)."""

    def __init__(self, ns: dict):
        self.ns = ns
        self.widths, self.dtype, self.bias = ns["WIDTHS"], ns["DTYPE"], ns["BIAS"]
        self.layers = len(self.widths) - 1
        self.caller = ns["_CALLER_TENSORS"]
        self.fast = True  # off for good if a compiled kernel lacks what the direct launch uses
        self.compiled = {}  # (kernel, device, warps, stages, pdl, alignment...) -> CompiledKernel
        # the same key -> (its launch, the arguments before the kernel's, whether the launch
        # takes the tensors' addresses: triton's C launch, verified by direct_launch)
        self.direct = {}
        self.lanes = {}  # (device index, M) -> Lane of the calls plan
        self.native = [None, None]  # the native extension's call and this module's state in it
        self.hidden = {}  # device -> (rows, [hidden buffers]) for the native lane's GEMMs
        self.lt_workspaces = {}  # device -> cuBLASLt workspace
        self.plans = {}  # (device index, M, capturing) -> Plan
        # (strategy, device) -> (rows, buffers): the module's, where a strategy has a workspace
        self.workspaces = ns.get("_WORKSPACES", {})
        self.lean = self._make_lean()

    def direct_call(self, cls, module_call) -> None:
        """Give the module's FusedMLP `cls` fused_call's __call__ (where this torch has every
        state that it checks)."""
        if _DIRECT_CALL:
            cls.__call__ = fused_call(cls, module_call)

    # -- plans -----------------------------------------------------------------------------

    def plan(self, cfg, m, x, shared_ws=True, capturing=False) -> Plan:
        """The Plan of the cell `cfg` for m rows like x (not cached)."""
        return Plan(self, cfg, m, x, shared_ws, capturing)

    def shared_workspace(self, strategy, x, m):
        """The device's workspace of `strategy` for at least m rows: the module's own
        (_workspace), which the module's public launches share too."""
        return self.ns["_workspace"](strategy, x, m)

    def new_plan(self, x2d, m, capturing, weights, biases) -> Plan:
        """The plan for (device, M, capturing), cached. Outside a capture, a bucket with a
        CUDA-graph cell gets that plan too and runs it once: loading a kernel while a graph is
        captured fails."""
        ns = self.ns
        device, key = x2d.get_device(), ns["gpu_key"](x2d.device)
        cfg = ns["config_for"](m, key, capturing)
        plan = self.plans[(device, m, capturing)] = Plan(
            self, cfg, m, x2d, not capturing, capturing
        )
        if not capturing and ns["_GRAPH_CELLS"] and (device, m, True) not in self.plans:
            graph = Plan(self, ns["config_for"](m, key, True), m, x2d, False)
            self.plans[(device, m, True)] = graph
            if graph.cfg is not plan.cfg:
                self.execute(graph, x2d, weights, biases, private=True)
        return plan

    def execute(self, plan, x2d, weights, biases, private=False, out=None):
        """Run `plan` on a contiguous [M, in] input, into `out` if given. private=True (during a
        CUDA graph capture): the plan's own workspace, or fresh zeroed buffers."""
        ns = self.ns
        if plan.torch_path is not None:
            y = plan.torch_path(x2d, weights, biases)
        elif plan.ready is not None and not plan.ready(x2d, weights):
            y = ns["reference"](x2d, weights, biases)
        else:
            m = x2d.shape[0]
            y = x2d.new_empty((m, self.widths[-1])) if out is None else out
            ws = plan.ws
            if ws is None and plan.strategy in ns.get("_WORKSPACE_BUFFERS", ()):
                make = ns["_WORKSPACE_BUFFERS"][plan.strategy]
                ws = make(x2d, m) if private else self.shared_workspace(plan.strategy, x2d, m)
            args = [x2d, y, *ns["_join"](weights, biases), *(ws or ()), m]
            self.run(
                plan.kernel, plan.grid, args, plan.num_warps, plan.num_stages, self.caller,
                plan.device, plan.pdl,
            )  # fmt: skip
            return y
        return y if out is None else out.copy_(y)

    def launch(self, x2d, weights, biases, cfg, out=None):
        """Run `cfg` (a TUNED cell) once on a contiguous [M, in] input (the module's _launch)."""
        return self.execute(Plan(self, cfg, x2d.shape[0], x2d), x2d, weights, biases, out=out)

    def forward(self, x2d, weights, biases, out=None):
        """y for a contiguous [M, in] CUDA input, M > 0 (the module's _forward): the cached plan
        of (device, M, capturing), whose first call outside a capture opens its lane."""
        m = x2d.shape[0]
        capturing = self.ns["_GRAPH_CELLS"] and torch.cuda.is_current_stream_capturing()
        plan = self.plans.get((x2d.get_device(), m, capturing))
        if plan is None:
            plan = self.new_plan(x2d, m, capturing, weights, biases)
        y = self.execute(plan, x2d, weights, biases, private=capturing, out=out)
        if plan.lane is None and not capturing:
            self.open_lane(plan, x2d)
        return y

    # -- launching -------------------------------------------------------------------------

    def run(self, kernel, grid, args, num_warps, num_stages, caller, device=None, pdl=False):
        """Launch `kernel` (the module's (function, tiles): the tiles are constexpr arguments
        after `args`); after its first launch, its compiled binary directly. The first `caller`
        arguments are tensors whose alignment the caller chooses (triton specialises on
        16-byte alignment); `device` is theirs (looked up if None)."""
        clusters = self.ns.get("_CLUSTER_LAUNCH", {})
        if not self.fast:
            if kernel in clusters:
                raise RuntimeError("mlpgen: a cluster kernel needs the direct launch, which is off")
            public = self.ns["_run_public"]
            return public(kernel, grid, args, num_warps, num_stages, caller, device, pdl)
        if device is None:
            device = args[0].get_device()
        if device != _current_device():  # triton launches on the current device
            with torch.cuda.device(device):
                return self.run(kernel, grid, args, num_warps, num_stages, caller, device, pdl)
        # each tensor's address, read once: for the alignment key and for the C launch
        ptrs = [a.data_ptr() if isinstance(a, torch.Tensor) else a for a in args]
        key = (kernel, device, num_warps, num_stages, pdl, *[p % 16 == 0 for p in ptrs[:caller]])
        function, tiles = kernel
        launch = self.direct.get(key)
        if launch is not None:
            run, head, addresses = launch
            # the C launch takes an int as it is; a tensor it checks again
            run(grid[0], grid[1], 1, _raw_stream(device), *head, *(ptrs if addresses else args),
                *tiles)  # fmt: skip
            return
        compiled = self.compiled.get(key)
        if compiled is not None:  # its launch: triton's C launch where direct_launch verifies it
            run, own = direct_launch(compiled.run)  # own: the C launch's arguments, if verified
            head = (compiled.function, *own, compiled.packed_metadata, None, None, None)
            self.direct[key] = (run, head, bool(own))
            return self.run(kernel, grid, args, num_warps, num_stages, caller, device, pdl)
        if kernel in clusters or pdl:  # compiled, not launched (a plain cluster launch faults)
            base = key[:4] + (False,) + key[5:]  # a PDL launch shares its binary (Linked)
            if base not in self.compiled:
                if kernel in clusters:
                    ctas, buffer = clusters[kernel]
                    compiled = cluster_compiled(
                        function, ctas, buffer, grid, [*args, *tiles], num_warps, num_stages
                    )
                else:
                    compiled = function.warmup(
                        *args, *tiles, grid=grid, num_warps=num_warps, num_stages=num_stages
                    )
                    getattr(compiled, "_init_handles", lambda: None)()
                if not launchable(compiled):
                    self.fast = False
                    return self.run(kernel, grid, args, num_warps, num_stages, caller, device, pdl)
                self.compiled[base] = compiled
            if pdl:
                self.compiled[key] = Linked(self.compiled[base])
            return self.run(kernel, grid, args, num_warps, num_stages, caller, device, pdl)
        compiled = function[grid](*args, *tiles, num_warps=num_warps, num_stages=num_stages)
        if launchable(compiled):
            self.compiled[key] = compiled
        else:
            self.fast = False

    def clusters_run(self, x) -> bool:
        """Whether a cluster kernel can run on x's device: sm_90 or newer and the direct
        launch with triton's cluster metadata."""
        return (
            self.fast
            and x.is_cuda
            and torch.cuda.get_device_capability(x.device)[0] >= 9
            and cluster_metadata_known()
        )

    def forget(self) -> None:
        """Forget every plan and lane: the module's TUNED changed (as the tuner changes it for
        each config it times)."""
        self.plans.clear()
        self.lanes.clear()
        self.native[:] = [None, None]

    # -- lanes -----------------------------------------------------------------------------

    def open_lane(self, plan, x2d) -> None:
        """Give `plan` its lane: a kernel lane once its one kernel is compiled for
        16-byte-aligned tensors (a misaligned first call leaves it to a later one), else a plan
        lane; then offer it to the native lane."""
        m = x2d.shape[0]
        buffers = self.ns.get("_WORKSPACE_BUFFERS", ())
        one_launch = self.fast and plan.kernel is not None and plan.ready is None
        compiled = None
        if not one_launch or (plan.strategy in buffers and plan.ws is None):
            lane = Lane()
            lane.call = functools.partial(self._call_plan, plan)
        else:
            key = (plan.kernel, plan.device, plan.num_warps, plan.num_stages, plan.pdl)
            compiled = self.compiled.get(key + (True,) * self.caller)
            if compiled is None or torch.cuda.is_current_stream_capturing():
                return
            lane = Lane()
            lane.run, head = direct_launch(compiled.run)
            lane.head = (compiled.function, *head, compiled.packed_metadata, None, None, None)
            lane.g0, lane.g1 = plan.grid
            lane.keep = [*(plan.ws or ()), m, *plan.kernel[1]]  # the workspace lives with it
            lane.tail = [a.data_ptr() if isinstance(a, torch.Tensor) else a for a in lane.keep]
            lane.like = self._output_like(x2d, m)
        lane.device = plan.device
        plan.lane = self.lanes[(plan.device, m)] = lane
        if compiled is not None and lane.run is not compiled.run:  # the verified C launch
            native.add_kernel(self, lane, compiled, m)
        elif plan.strategy == "epilogue" and self.fast:
            self._open_native_layers(plan, x2d)

    def _open_native_layers(self, plan, x2d) -> None:
        """The epilogue strategy's layers (cuBLASLt GEMMs) in the native lane, outside a
        capture; its GEMMs end without an output activation."""
        if self.ns["SPEC"]["out_act"] == "none" and not torch.cuda.is_current_stream_capturing():
            native.add_layers(self, plan, x2d)

    def _call_plan(self, plan, x2d, params, out):
        weights, biases = self.ns["_split"](params)
        return self.execute(plan, x2d, weights, biases, out=out)

    def _output_like(self, x, m):
        """What torch.empty_like turns into a fresh contiguous [m, out] output (cheaper than
        new_empty): a broadcast scalar holding no memory where both sizes exceed 1."""
        n = self.widths[-1]
        if m > 1 and n > 1:
            return torch.empty((), dtype=self.dtype, device=x.device).expand(m, n)
        return torch.empty((m, n), dtype=self.dtype, device=x.device)

    def hidden_buffers(self, x, m):
        """The device's hidden-activation buffers for m rows (grown by doubling, kept)."""
        index = x.get_device()
        held = self.hidden.get(index)
        if held is None or held[0] < m:
            rows = max(m, 2 * held[0]) if held is not None else m
            bufs = [
                torch.empty((rows, n), dtype=self.dtype, device=x.device) for n in self.widths[1:-1]
            ]
            held = self.hidden[index] = (rows, bufs)
        return [h[:m] for h in held[1]]

    def native_rows(self) -> set[int]:
        """The batch sizes whose calls the native lane takes."""
        call, state = self.native
        if state is None:
            return set()
        return {lane[1] for lane in native.build().lanes(state)}

    def _make_lean(self):
        """The lean call: y = MLP(x) through its lane, or None where the call needs the
        module's general path (which then checks it and reports what is wrong). A training call
        (autograd differentiates y) goes to the module's Training (train). A lane takes
        an inference call (no gradient, no CUDA graph capture where the table has graph cells)
        on a contiguous input (leading dims viewed as one) with parameters (w0, [b0,] w1, ...)
        of this dtype, contiguous, on the input's device, and 16-byte aligned for a kernel lane.
        out: a contiguous tensor of y's shape and dtype on x's device, not requiring grad."""
        widths, dtype, lanes, nat, ns = self.widths, self.dtype, self.lanes, self.native, self.ns
        k0, n_out = widths[0], widths[-1]
        row_bytes = (k0 * dtype.itemsize, n_out * dtype.itemsize)

        shapes = []  # of w0, [b0,] w1, ...: the general path says what is wrong with others
        for k, n in zip(widths[:-1], widths[1:]):
            shapes += [(n, k), (n,)] if self.bias else [(n, k)]

        def params_fit(params, device, aligned, ptrs):
            if len(params) != len(shapes):
                return False
            for p, shape in zip(params, shapes):
                if (
                    p.dtype is not dtype
                    or p.shape != shape
                    or not p.is_contiguous()
                    or p.get_device() != device
                ):
                    return False
            return not aligned or not functools.reduce(operator.or_, ptrs, 0) & 15

        def out_fits(out, m, xp, yp, device):
            return (
                out.dtype is dtype
                and out.shape == (m, n_out)
                and out.is_contiguous()
                and out.get_device() == device
                and not out.requires_grad
                and (yp >= xp + m * row_bytes[0] or xp >= yp + m * row_bytes[1])
            )

        trained = [None, ()]  # the parameters' addresses and weak references train last saw

        def train(x, params):
            """A training call (autograd differentiates y) straight to the module's Training,
            the general path's checks skipped once these parameters passed them."""
            training = ns["_mlpgen"]("mlpgen.runtime.train")
            if training is None:
                return None
            y = training.native_step(x, params)  # the native training lane checks the call
            if y is not None:
                return y
            if x.shape[1] != k0 or not x.is_contiguous():
                return None
            if x.shape[0] == 0:  # no rows: the general path's torch ops
                return None
            try:
                ptrs = [p.data_ptr() for p in params]
            except (AttributeError, RuntimeError):  # not tensors, or sparse ones
                return None
            if ptrs != trained[0] or not all(map(_is, map(_deref, trained[1]), params)):
                if not params_fit(params, x.get_device(), False, ptrs):
                    return None
                trained[:] = [ptrs, [weakref.ref(p) for p in params]]
            return training.python_step(x, params)  # the native lane declined it above

        def lean(x, params, out=None):
            if nat[0] is not None:
                y = nat[0](nat[1], x, params, out)
                if y is not None:
                    return y
            try:
                shape = x.shape
            except AttributeError:  # not a tensor: the general path says what it expected
                return None
            if len(shape) != 2:  # leading batch dims: the lane of their product, on a view
                if len(shape) < 2 or shape[-1] != k0 or not x.is_contiguous():
                    return None
                out2d = None
                if out is not None:
                    if out.shape[:-1] != shape[:-1] or not out.is_contiguous():
                        return None
                    out2d = out.view(-1, n_out)
                y = lean(x.view(-1, k0), params, out2d)
                if y is None:
                    return None
                return out if out is not None else y.view(*shape[:-1], n_out)
            if x.dtype is not dtype:
                return None
            if torch.is_grad_enabled():
                try:
                    grad = x.requires_grad or any(p.requires_grad for p in params)
                except AttributeError:  # not tensors: the general path says what it expected
                    return None
                if grad:  # out= refuses autograd on the general path
                    return None if out is not None else train(x, params)
            lane = lanes.get((x.get_device(), shape[0]))
            if lane is None or shape[1] != k0 or not x.is_contiguous():
                return None
            device = lane.device
            try:
                ptrs = [p.data_ptr() for p in params]
            except (AttributeError, RuntimeError):  # not tensors, or sparse ones: the general
                return None  # path says what it expected
            if ptrs != lane.checked or not all(map(_is, map(_deref, lane.held), params)):
                if not params_fit(params, device, lane.run is not None, ptrs):
                    return None
                lane.checked, lane.held = ptrs, [weakref.ref(p) for p in params]
            if ns["_GRAPH_CELLS"] and torch.cuda.is_current_stream_capturing():
                return None
            if out is not None:
                xp, yp = x.data_ptr(), out.data_ptr()
                if not out_fits(out, shape[0], xp, yp, device):
                    return None
            if lane.call is not None:
                return lane.call(x, params, out)
            if _current_device() != device:  # triton launches on the current device
                return None
            if out is None:
                out = torch.empty_like(lane.like)
                xp, yp = x.data_ptr(), out.data_ptr()
            if (xp | yp) & 15:  # the parameters' alignment is checked with them
                return None
            lane.run(
                lane.g0, lane.g1, 1, _raw_stream(device), *lane.head, xp, yp, *ptrs, *lane.tail
            )
            return out

        return lean
