"""mlpgen.runtime on the CPU: its version gate, how a generated module attaches to it (or says
once why it launches through triton's public API), and its lanes (the inference fast path: the
compiled kernel's launcher called with the tensors' addresses). A fake launcher stands in for
the compiled kernel and writes the reference result at the output address it is given, so these
tests check what a lane passes (argument order, grid, stream, workspace) and when it steps aside
for the module's general path. The lanes with real kernels run in tests/test_gpu_module.py."""

import ctypes
import types
import warnings

import pytest
import torch
import triton
from conftest import assert_matches

from mlpgen import runtime
from mlpgen.runtime import lanes, native
from mlpgen.runtime.lanes import ModuleRuntime
from mlpgen.runtime.train import training_of
from mlpgen.spec import MLPSpec

SPEC = MLPSpec((20, 33, 7), act="gelu", dtype="fp32")
M = 5
WS_ADDRESS = 4096  # a fake workspace address the lane appends after the caller's tensors


class FakeLaunch:
    """Records each launch and writes reference(x) at the output address (x read from the
    address it is given, so a wrong argument order gives a wrong result)."""

    def __init__(self, mod, weights, biases):
        self.mod, self.weights, self.biases, self.calls = mod, weights, biases, []

    def __call__(self, g0, g1, g2, stream, function, meta, *rest):
        self.calls.append((g0, g1, g2, stream, function, meta, *rest))
        hooks, args = rest[:3], rest[3:]
        assert hooks == (None, None, None)
        x = torch.empty(M, SPEC.widths[0])
        ctypes.memmove(x.data_ptr(), args[0], x.nbytes)
        y = self.mod.reference(x, self.weights, self.biases).contiguous()
        ctypes.memmove(args[1], y.data_ptr(), y.nbytes)


def attach(mod, monkeypatch, fast=True):
    """A ModuleRuntime for a module loaded on the CPU, its lean call in the module's hands (as
    _attach_runtime arranges where the runtime accepts the installed triton)."""
    rt = ModuleRuntime(vars(mod))
    rt.fast = fast
    monkeypatch.setattr(mod, "_RT", rt)
    monkeypatch.setattr(mod, "_lean", rt.lean)
    monkeypatch.setattr(lanes, "_current_device", lambda: -1)  # a CPU tensor's get_device()
    monkeypatch.setattr(lanes, "_raw_stream", lambda device: 77)
    return rt


@pytest.fixture
def laned(load_generated, monkeypatch):
    """(module, FusedMLP, fake launcher): the module has a lane for CPU tensors of M rows."""
    mod, _ = load_generated(SPEC)
    rt = attach(mod, monkeypatch)
    fused = mod.FusedMLP()
    weights = [lin.weight.detach() for lin in fused.linears]
    biases = [lin.bias.detach() for lin in fused.linears]
    fake = FakeLaunch(mod, weights, biases)
    lane = lanes.Lane()
    lane.run, lane.g0, lane.g1 = fake, 3, 2
    lane.head = ("FUNCTION", "META", None, None, None)  # what a launcher object takes
    lane.keep, lane.tail = [], [WS_ADDRESS, M]
    lane.like, lane.device = rt._output_like(torch.empty(M, 20), M), -1  # a CPU tensor's
    rt.lanes[(-1, M)] = lane
    return mod, fused, fake


def params_of(fused):
    return [p for lin in fused.linears for p in (lin.weight, lin.bias)]


def test_the_lane_launches_with_every_address_in_order(laned):
    mod, fused, fake = laned
    x = torch.randn(M, 20)
    with torch.no_grad():
        y = fused(x)
        y2 = fused(x)
    assert len(fake.calls) == 2
    assert fake.calls[0][:6] == (3, 2, 1, 77, "FUNCTION", "META")  # grid, stream, kernel
    want = [x.data_ptr(), y.data_ptr()] + [p.data_ptr() for p in params_of(fused)]
    assert list(fake.calls[0][9:]) == want + [WS_ADDRESS, M]
    assert y.shape == (M, 7) and y.is_contiguous() and y.dtype == torch.float32
    torch.testing.assert_close(y, mod.reference(x, *weights_biases(fused)))
    assert y2.data_ptr() != y.data_ptr()  # a fresh output each call
    torch.testing.assert_close(y2, y)


def test_the_lane_launches_into_out(laned):
    """out=: the lane passes out's address as y's and returns out (leading dims: a view of
    it); an out the lane cannot take (another shape) goes to the general path, which says why."""
    mod, fused, fake = laned
    x = torch.randn(M, 20)
    out = torch.full((M, 7), float("nan"))
    with torch.no_grad():
        assert fused(x, out=out) is out
        deep = torch.full((1, M, 7), float("nan"))
        assert fused(x.view(1, M, 20), out=deep) is deep
        with pytest.raises(ValueError, match="of shape"):
            fused(x, out=torch.empty(M, 8))
        inside = torch.randn(M * 20)  # an out in the input's own memory
        with pytest.raises(ValueError, match="must not share memory"):
            fused(inside.view(M, 20), out=inside[20 : 20 + M * 7].view(M, 7))
    assert [call[10] for call in fake.calls] == [out.data_ptr(), deep.data_ptr()]
    torch.testing.assert_close(out, mod.reference(x, *weights_biases(fused)))
    torch.testing.assert_close(deep[0], out)


def weights_biases(fused):
    return [lin.weight.detach() for lin in fused.linears], [
        lin.bias.detach() for lin in fused.linears
    ]


def test_the_functional_call_takes_the_lane(laned):
    mod, fused, fake = laned
    w, b = weights_biases(fused)
    x = torch.randn(M, 20)
    y = mod.mlp(x, w, b)  # nothing requires grad: no torch.no_grad() needed
    assert len(fake.calls) == 1
    torch.testing.assert_close(y, mod.reference(x, w, b))


def test_leading_batch_dims_take_the_lane_of_their_product(laned):
    mod, fused, fake = laned
    x = torch.randn(1, M, 20)
    with torch.no_grad():
        y = fused(x)
    assert len(fake.calls) == 1 and fake.calls[0][9] == x.data_ptr()
    assert y.shape == (1, M, 7)
    torch.testing.assert_close(
        y, mod.reference(x.view(M, 20), *weights_biases(fused)).view(1, M, 7)
    )


def misaligned(m):
    return torch.randn(m * 20 + 1)[1:].view(m, 20)  # 4 bytes past an aligned base


STEP_ASIDE = {
    "another batch size": lambda x, w, b: (torch.randn(M + 1, 20), w, b),
    "a 3-D input of other rows": lambda x, w, b: (torch.randn(2, M, 20), w, b),
    "a non-contiguous 3-D input": lambda x, w, b: (torch.randn(1, M, 40)[..., :20], w, b),
    "a non-contiguous input": lambda x, w, b: (torch.randn(20, M).t(), w, b),
    "a misaligned input": lambda x, w, b: (misaligned(M), w, b),
    "a non-contiguous weight": lambda x, w, b: (x, [w[0].t().contiguous().t(), w[1]], b),
    "a misaligned bias": lambda x, w, b: (x, w, [torch.randn(34)[1:], b[1]]),
}


@pytest.mark.parametrize("case", sorted(STEP_ASIDE))
def test_the_lane_steps_aside_for_the_general_path(laned, case):
    mod, fused, fake = laned
    w, b = weights_biases(fused)
    x, w, b = STEP_ASIDE[case](torch.randn(M, 20), w, b)
    y = mod.mlp(x, w, b)
    assert fake.calls == []
    torch.testing.assert_close(y, mod.reference(x, w, b), atol=1e-4, rtol=1e-4)


def test_the_lane_steps_aside_when_a_gradient_is_needed(laned):
    mod, fused, fake = laned
    x = torch.randn(M, 20)
    y = fused(x)  # grad mode, parameters that require grad: the autograd path
    assert fake.calls == [] and y.grad_fn is not None
    y.sum().backward()
    assert fused.linears[0].weight.grad is not None


def test_a_training_call_skips_the_general_paths_checks_once_its_parameters_passed(
    laned, monkeypatch
):
    """A call that autograd differentiates goes from the lean call straight to the module's
    Training (its native lane asked once, then Training.python_step), without the general
    path's checks; parameters that do not fit, and out=, still reach the general path, which
    says what is wrong."""
    mod, fused, fake = laned
    checked, ran, asked = [], [], []
    check = mod._check
    monkeypatch.setattr(mod, "_check", lambda *a: checked.append(1) or check(*a))
    training = mod._mlpgen("mlpgen.runtime.train")
    step, native = training.python_step, training.native_step
    spy = lambda x, params: ran.append(len(params)) or step(x, params)  # noqa: E731
    monkeypatch.setattr(training, "python_step", spy)
    monkeypatch.setattr(training, "native_step", lambda *a: asked.append(1) or native(*a))
    x = torch.randn(M, 20)
    for _ in range(2):
        y = fused(x)
    assert ran == [4, 4] and asked == [1, 1] and checked == [] and fake.calls == []
    y.sum().backward()
    seq = fused.to_module()
    seq(x).sum().backward()
    for got, want in zip(fused.parameters(), seq.parameters()):
        torch.testing.assert_close(got.grad, want.grad, atol=1e-4, rtol=1e-4)
    w, b = weights_biases(fused)
    with pytest.raises(ValueError, match="layer 1 weight has shape"):
        mod.mlp(x, [w[0], torch.randn(7, 32, requires_grad=True)], b)
    assert checked and ran == [4, 4]  # the general path checked it
    with pytest.raises(RuntimeError, match="does not support automatic differentiation"):
        fused(x, out=torch.empty(M, 7))


def test_a_recomputing_training_forward_takes_the_inference_lane(laned, monkeypatch):
    """A training config that recomputes in the backward saves no hidden layer, so its forward
    is the inference forward: the lane's launch where the call has a lane (autograd records
    nothing inside the autograd function), else the module's general forward."""
    mod, fused, fake = laned
    training = mod._mlpgen("mlpgen.runtime.train")
    general = []
    forward = mod._forward
    monkeypatch.setattr(mod, "_forward", lambda *a: general.append(1) or forward(*a))
    weights, biases = weights_biases(fused)
    cfg = {"recompute": True, "one_pass": True}
    for m in (M, M + 1):  # M has a lane, M + 1 none
        x = torch.randn(m, 20, requires_grad=True)
        with torch.no_grad():
            y, saved = training.forward(x, weights, biases, cfg)
        assert saved == [*weights, *biases]
        torch.testing.assert_close(y, mod.reference(x, weights, biases), atol=1e-4, rtol=1e-4)
    assert len(fake.calls) == 1 and general == [1]


def test_the_lane_steps_aside_on_another_current_device(laned, monkeypatch):
    mod, fused, fake = laned
    monkeypatch.setattr(lanes, "_current_device", lambda: 0)
    with torch.no_grad():
        fused(torch.randn(M, 20))
    assert fake.calls == []


def test_the_lane_leaves_refusals_to_the_general_path(laned):
    mod, fused, fake = laned
    w, b = weights_biases(fused)
    with pytest.raises(TypeError, match="the input is torch.float64"):
        mod.mlp(torch.randn(M, 20, dtype=torch.float64), w, b)
    with pytest.raises(TypeError, match="layer 0 weight is torch.float64"):
        mod.mlp(torch.randn(M, 20), [w[0].double(), w[1]], b)
    with pytest.raises(ValueError, match="expected 2 biases"):
        mod.mlp(torch.randn(M, 20), w, b[:1])
    with pytest.raises(
        ValueError, match=r"layer 0 weight has shape \[20, 33\], expected \[33, 20\]"
    ):
        mod.mlp(torch.randn(M, 20), [w[0].t().contiguous(), w[1]], b)
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        mod.mlp(None, w, b)
    assert fake.calls == []


@pytest.mark.parametrize("m", [1, 2, 37])
def test_output_template_gives_fresh_contiguous_outputs(load_generated, monkeypatch, m):
    mod, _ = load_generated(SPEC)
    like = attach(mod, monkeypatch)._output_like(torch.empty(m, 20), m)
    y = torch.empty_like(like)
    assert y.shape == (m, 7) and y.stride() == (7, 1) and y.dtype == torch.float32
    assert y.untyped_storage().nbytes() == m * 7 * 4
    assert torch.empty_like(like).data_ptr() != y.data_ptr()


@pytest.mark.interpret
def test_calls_are_planned_once_per_device_and_batch_with_the_graph_cell_run_early(
    load_generated, monkeypatch
):
    """ModuleRuntime.forward (a module's GPU calls, here on CPU tensors standing in): the first
    call of a batch size plans it and its CUDA-graph cell, running that one once (loading a
    kernel during a capture fails); later calls reuse the plan; the calls
    cell's workspace is the device's shared one; a call under capture takes the graph plan;
    _forget_dispatch drops the plans."""
    from mlpgen.emit import entry, with_graph_winner
    from mlpgen.spec import KernelConfig
    from mlpgen.verify import random_problem, reference

    calls = KernelConfig("split", block_m=16, chunk=16, block_n=16, block_k=16)
    graph = KernelConfig("stream", block_m=16, block_n=16, chunk=16)
    cell = with_graph_winner(entry(calls), graph, 1.0)
    mod, _ = load_generated(SPEC, gpu_key="some|sm90|132", table={M: cell})
    rt = attach(mod, monkeypatch, fast=False)  # launches by the public API (the interpreter)
    monkeypatch.setattr(mod, "gpu_key", lambda device=None: "some|sm90|132")
    capturing = [False]
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: capturing[0])
    monkeypatch.setattr(rt, "open_lane", lambda plan, x: None)  # lanes: tests above
    executed = []
    real = rt.execute
    monkeypatch.setattr(rt, "execute", lambda p, *a, **k: executed.append(p) or real(p, *a, **k))
    x, weights, biases = random_problem(SPEC, M)
    want = reference(SPEC, x, weights, biases)
    for _ in range(2):
        assert_matches(rt.forward(x, weights, biases), want, "fp32")
    plan, early = rt.plans[(-1, M, False)], rt.plans[(-1, M, True)]
    assert plan.strategy == "split" and early.strategy == "stream"
    assert executed == [early, plan, plan]
    assert plan.ws is rt.workspaces[("split", -1)][1]
    capturing[0] = True
    assert_matches(rt.forward(x, weights, biases), want, "fp32")
    assert executed[-1] is early and len(rt.plans) == 2
    mod._forget_dispatch()
    assert rt.plans == {}


PLAN_LANES = {  # strategies whose lane runs the plan itself (no single kernel launch); the
    # GPU test adds stream with TMA, whose descriptors need widths this spec does not have
    "torch": dict(strategy="torch"),
}


@pytest.mark.parametrize("strategy", sorted(PLAN_LANES))
def test_other_strategies_get_a_lane_that_runs_their_plan(load_generated, monkeypatch, strategy):
    """Several launches or the torch path: the lane calls the plan (execute), skipping the
    general path's layers, and gives its result."""
    from mlpgen.emit import entry
    from mlpgen.spec import KernelConfig

    cell = entry(KernelConfig(**PLAN_LANES[strategy]))
    mod, _ = load_generated(SPEC, gpu_key="some|sm90|132", table={M: cell})  # its kernels
    rt = attach(mod, monkeypatch)  # as on a GPU
    x = torch.randn(M, 20)
    plan = rt.plan(cell, M, x)
    rt.open_lane(plan, x)
    lane = rt.lanes.pop((None, M))  # a CPU plan's device
    assert plan.lane is lane and lane.call is not None and lane.run is None
    lane.device = -1  # a CPU tensor's get_device(), so that calls find the lane
    rt.lanes[(-1, M)] = lane
    rt.fast = False  # the interpreter's launches
    ran = []
    real = rt.execute
    monkeypatch.setattr(rt, "execute", lambda *a, **kw: ran.append(a[0]) or real(*a, **kw))
    fused = mod.FusedMLP()
    out = torch.full((M, 7), float("nan"))
    with torch.no_grad():
        y = fused(x)
        assert fused(x, out=out) is out  # written by the plan (its last launch or a copy)
    assert ran == [plan, plan]
    w, b = weights_biases(fused)
    torch.testing.assert_close(y, mod.reference(x, w, b), atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(out, y)


def test_a_lane_waits_for_its_aligned_kernel(load_generated, monkeypatch):
    """A one-launch plan whose kernel is not compiled for aligned tensors yet (a misaligned
    first call) stays without a lane, to be given one by a later call."""
    from mlpgen.emit import entry
    from mlpgen.spec import KernelConfig

    cell = entry(KernelConfig("stream", block_m=16, block_n=16, chunk=16))
    mod, _ = load_generated(SPEC, gpu_key="some|sm90|132", table={M: cell})
    rt = attach(mod, monkeypatch)
    x = torch.randn(M, 20)
    plan = rt.plan(cell, M, x)
    rt.open_lane(plan, x)
    assert plan.lane is None and rt.lanes == {}


def test_the_lane_checks_parameters_again_only_when_they_change(laned, monkeypatch):
    """The per-parameter checks run when the parameters' objects or addresses differ from the
    last ones that passed; the same module's parameters pass on identity and address."""
    mod, fused, fake = laned
    lane = mod._RT.lanes[(-1, M)]
    x = torch.randn(M, 20)
    with torch.no_grad():
        fused(x)
        held = lane.held
        fused(x)
        assert lane.held is held and len(fake.calls) == 2  # the same objects: no new check
        w, b = weights_biases(fused)
        views = [t.view(t.shape) for t in w]  # other objects at the same addresses
        y = mod.mlp(x, views, b)
        assert lane.held is not held and lane.held[0]() is views[0]  # checked and kept
        assert len(fake.calls) == 3
        with pytest.raises(ValueError, match="layer 1 weight has shape"):
            mod.mlp(x, [w[0], torch.randn(7, 32)], b)  # another object of another shape
    assert len(fake.calls) == 3
    torch.testing.assert_close(y, mod.reference(x, w, b))


PARAMETER_CHANGES = {  # in place on the module's own parameter objects, after a lane call
    "non-contiguous data": lambda lin: setattr(
        lin.weight, "data", lin.weight.data.t().contiguous().t()
    ),
    "misaligned data": lambda lin: setattr(lin.bias, "data", torch.randn(lin.bias.numel() + 1)[1:]),
    "another dtype": lambda lin: lin.double(),
}


@pytest.mark.parametrize("change", sorted(PARAMETER_CHANGES))
def test_the_lane_notices_parameters_changed_in_place(laned, change):
    mod, fused, fake = laned
    x = torch.randn(M, 20)
    with torch.no_grad():
        fused(x)
        PARAMETER_CHANGES[change](fused.linears[0])
        try:
            y = fused(x)
        except TypeError as e:  # another dtype: the general path refuses it
            assert "float64" in str(e) and change == "another dtype"
            y = None
    assert len(fake.calls) == 1
    if y is not None:
        torch.testing.assert_close(
            y, mod.reference(x, *weights_biases(fused)), atol=1e-4, rtol=1e-4
        )


# triton 3.6's CudaLauncher.__call__: the one launcher whose C launch a lane calls directly
LAUNCHER_36_CALL = """
    def __call__(self, gridX, gridY, gridZ, stream, function, *args):

        def allocate_scratch(size, align, allocator):
            if size > 0:
                grid_size = gridX * gridY * gridZ
                alloc_size = grid_size * self.num_ctas * size
                alloc_fn = allocator.get()
                return alloc_fn(alloc_size, align, stream)
            return None

        global_scratch = allocate_scratch(self.global_scratch_size, self.global_scratch_align, _allocation._allocator)
        profile_scratch = allocate_scratch(self.profile_scratch_size, self.profile_scratch_align,
                                           _allocation._profile_allocator)
        self.launch(gridX, gridY, gridZ, stream, function, self.launch_cooperative_grid, self.launch_pdl,
                    global_scratch, profile_scratch, *args)
"""  # noqa: E501

OTHER_CALL = """
    def __call__(self, gridX, gridY, gridZ, stream, function, *args):
        self.launch(gridX, gridY, gridZ, stream, function, False, False, None, None, *args)
"""

LAUNCHER_CLASS = """
class Launcher:
    \"\"\"A compiled kernel's launcher; `launch` stands in for the C function: it records
    what it is given and hands the kernel's part to a FakeLaunch.\"\"\"

    def __init__(self, fake, scratch=0):
        self.fake, self.calls = fake, []
        self.global_scratch_size = self.profile_scratch_size = scratch
        self.launch_cooperative_grid, self.launch_pdl = "COOP", "PDL"

    def launch(self, g0, g1, g2, stream, function, coop, pdl, scratch, profile, *rest):
        self.calls.append((g0, g1, g2, stream, function, coop, pdl, scratch, profile, *rest))
        self.fake(g0, g1, g2, stream, function, *rest)
"""


@pytest.fixture
def launchers(tmp_path):
    """{"3.6": the class with triton 3.6's __call__, "other": one with another}, each from a
    file (the lane reads a launcher's source)."""
    import importlib.util

    classes = {}
    for name, call in (("3.6", LAUNCHER_36_CALL), ("other", OTHER_CALL)):
        path = tmp_path / f"launcher_{name.replace('.', '')}.py"
        path.write_text(LAUNCHER_CLASS + call)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        classes[name] = module.Launcher
    return classes


def test_the_direct_launch_is_for_the_verified_launcher_only(laned, launchers):
    mod, _, fake = laned
    verified = launchers["3.6"](fake)
    assert lanes.direct_launch(verified) == (verified.launch, ("COOP", "PDL", None, None))
    with_scratch = launchers["3.6"](fake, scratch=128)
    assert lanes.direct_launch(with_scratch) == (with_scratch, ())
    other = launchers["other"](fake)
    assert lanes.direct_launch(other) == (other, ())
    import triton
    from triton.backends.nvidia.driver import CudaLauncher

    real = object.__new__(CudaLauncher)  # this triton's own launcher: direct on 3.6 only
    real.global_scratch_size = real.profile_scratch_size = 0
    real.launch_cooperative_grid = real.launch_pdl = False
    real.launch = "C LAUNCH"
    direct = lanes.direct_launch(real)[0] == "C LAUNCH"
    assert direct == triton.__version__.startswith("3.6.")


def test_a_runtime_launch_of_a_compiled_kernel_calls_the_verified_c_launch(
    load_generated, monkeypatch, launchers
):
    """ModuleRuntime.run (how the training kernels launch): once a kernel is compiled, each
    launch calls triton's C launch itself where the launcher is the verified one (its __call__
    cannot run here: the _allocation it names is triton's) with the tensors' addresses, else the
    launcher with the tensors."""
    mod, _ = load_generated(SPEC)
    rt = attach(mod, monkeypatch)
    args = [torch.empty(4), 5]
    verified = ("COOP", "PDL", None, None, "M", None, None, None, args[0].data_ptr(), 5)
    other = (False, False, None, None, "M", None, None, None, *args)
    for name, own in (("3.6", verified), ("other", other)):
        launcher = launchers[name](lambda *a: None)
        kernel = (object(), ("TILE",))  # (function, tiles)
        key = (kernel, -1, 4, 3, False, args[0].data_ptr() % 16 == 0)
        compiled = types.SimpleNamespace(run=launcher, function="FUNCTION", packed_metadata="M")
        rt.compiled[key] = compiled
        for _ in range(2):
            rt.run(kernel, (3, 2), args, 4, 3, 1, device=-1)
        want = (3, 2, 1, 77, "FUNCTION", *own, "TILE")
        assert launcher.calls == [want, want]


def test_a_pdl_launch_shares_the_binary_of_the_launch_without(launchers):
    """Linked: the compiled kernel's binary, function and metadata, with a launcher of its own
    that sets launch_pdl (the original keeps its own); the C launch is still called directly."""
    fake = types.SimpleNamespace(
        src="SRC", function=7, packed_metadata=(4, 1, 0), run=launchers["3.6"](print)
    )
    linked = lanes.Linked(fake)
    assert (linked.src, linked.function, linked.packed_metadata) == ("SRC", 7, (4, 1, 0))
    assert linked.compiled is fake and linked.run is not fake.run
    assert linked.run.launch_pdl is True and fake.run.launch_pdl == "PDL"
    assert lanes.direct_launch(linked.run) == (linked.run.launch, ("COOP", True, None, None))


def test_a_kernel_lane_calls_the_c_launch_with_every_argument(
    load_generated, monkeypatch, launchers
):
    """_open_lane's lane for a compiled kernel with the verified launcher: the C launch gets
    grid, stream, function, the launcher's own four arguments, metadata, hooks, the tensors'
    addresses and the workspace/M/tiles tail, and the result is right."""
    from mlpgen.emit import entry
    from mlpgen.spec import KernelConfig

    cell = entry(KernelConfig("stream", block_m=16, block_n=16, chunk=16))
    mod, _ = load_generated(SPEC, gpu_key="some|sm90|132", table={M: cell})
    rt = attach(mod, monkeypatch)
    fused = mod.FusedMLP()
    fake = FakeLaunch(mod, *weights_biases(fused))
    launcher = launchers["3.6"](fake)

    class Compiled:
        run, function, packed_metadata = launcher, "FUNCTION", "META"

    x = torch.randn(M, 20)
    plan = rt.plan(cell, M, x)
    key = (plan.kernel, plan.device, plan.num_warps, plan.num_stages, False)  # no PDL
    rt.compiled[key + (True,) * mod._CALLER_TENSORS] = Compiled()
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)  # CPU torch
    monkeypatch.setattr(native, "build", lambda: None)  # no native lane: the Python one
    rt.open_lane(plan, x)
    lane = rt.lanes.pop((None, M))  # a CPU plan's device; calls look up get_device()'s
    lane.device = -1
    rt.lanes[(-1, M)] = lane
    with torch.no_grad():
        y = fused(x)
    g0, g1 = plan.grid
    want = (g0, g1, 1, 77, "FUNCTION", "COOP", "PDL", None, None, "META", None, None, None)
    assert len(launcher.calls) == 1 and launcher.calls[0][:13] == want
    addresses = [x.data_ptr(), y.data_ptr()] + [p.data_ptr() for p in params_of(fused)]
    # stream's tail: M, then its tiles (constexpr arguments, which the C launch skips)
    assert list(launcher.calls[0][13:]) == addresses + [M, 16, 16]
    torch.testing.assert_close(y, mod.reference(x, *weights_biases(fused)))


class FakeNative:
    """Stands in for the built native lane: records what a lane registers (refuse: the second
    step of a lane, a gemm, is refused)."""

    def __init__(self, refuse=False):
        self.registered, self.refuse = [], refuse

    def state(self, *args):
        return "STATE"

    def add(self, *args):
        self.registered.append(("add", *args))

    def remove(self, *args):
        self.registered.append(("remove", *args))

    def gemm(self, state, extend, *args):
        self.registered.append(("gemm", state, extend, *args))
        if self.refuse and extend:
            raise RuntimeError("refused")

    def call(self, *args):
        return None


def test_an_epilogue_lane_is_a_gemm_a_layer(load_generated, monkeypatch):
    """The epilogue strategy in the native lane: one cuBLASLt GEMM a layer, x -> hidden with the
    hidden layer's bias and activation in the epilogue (tanh GELU: GELU_BIAS), hidden -> y with
    the bias; the hidden buffer is the runtime's. Where the native lane refuses a
    step, the lane goes (it would compute part of the MLP)."""
    from mlpgen.emit import entry
    from mlpgen.spec import KernelConfig

    spec = MLPSpec((20, 33, 7), act="gelu_tanh", dtype="fp32")
    cell = entry(KernelConfig("epilogue"))
    for refuse in (False, True):
        mod, _ = load_generated(spec, gpu_key="some|sm90|132", table={M: cell})
        rt = attach(mod, monkeypatch)
        monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
        fake = FakeNative(refuse)
        monkeypatch.setattr(native, "build", lambda fake=fake: fake)
        x = torch.randn(M, 20)
        plan = rt.plan(cell, M, x)
        rt.open_lane(plan, x)
        assert plan.lane.call is not None
        hidden = rt.hidden_buffers(x, M)[0]
        if refuse:
            assert [r[0] for r in fake.registered] == ["gemm", "gemm", "remove"]
            assert rt.native[0] is None
            continue
        (kind0, *first), (kind1, *second) = fake.registered
        assert (kind0, kind1) == ("gemm", "gemm")
        assert first[:13] == [
            "STATE", False, None, M, 20, 33, -2, 0, -1, hidden.data_ptr(), 0, 1, 36,
        ]  # fmt: skip
        assert second[:13] == [
            "STATE", True, None, M, 33, 7, -1, hidden.data_ptr(), -3, 0, 2, 3, native.LT_BIAS,
        ]  # fmt: skip
        assert rt.native[0] == fake.call


# -- the version gate ---------------------------------------------------------------------------


@pytest.mark.parametrize("lane", sorted(runtime.LANES))
def test_each_lane_names_the_triton_releases_it_supports(lane):
    assert runtime.unsupported(lane, "3.6.0") is None
    assert runtime.unsupported(lane, "3.6.0+git1234") is None
    for other in ("3.5.1", "3.9.0", "4.0.0", "nightly"):
        reason = runtime.unsupported(lane, other)
        assert f"supports triton 3.6, not {other}" in reason and lane in reason


def test_attach_gives_a_runtime_or_the_reason(load_generated, monkeypatch):
    mod, _ = load_generated(SPEC)
    monkeypatch.setattr(mod, "_INTERPRET", False)
    monkeypatch.setattr(triton, "__version__", "3.6.0")
    assert isinstance(runtime.attach(vars(mod))[0], ModuleRuntime)
    monkeypatch.setattr(mod, "_INTERPRET", True)  # the interpreter launches by the public API
    assert runtime.attach(vars(mod)) == (None, None)
    monkeypatch.setattr(mod, "_INTERPRET", False)
    monkeypatch.setattr(triton, "__version__", "3.99.0")
    assert runtime.attach(vars(mod)) == (
        None,
        "mlpgen.runtime's direct launch supports triton 3.6, not 3.99.0",
    )
    with pytest.raises(ValueError, match="unknown lane"):
        runtime.unsupported("warp")


def slow_path_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if "public API" in str(w.message)]


@pytest.mark.interpret
def test_a_triton_the_runtime_does_not_know_takes_the_public_path_with_one_warning(
    load_generated, monkeypatch
):
    """A module loaded where the runtime refuses the installed triton has no runtime, launches
    through kernel[grid] and says so once, naming the reason, however many calls follow."""
    from mlpgen.verify import random_problem, reference

    monkeypatch.setattr(triton, "__version__", "3.99.0")
    mod, _ = load_generated(SPEC)
    assert mod._RT is None and mod._run is mod._run_public and "not 3.99.0" in mod._SLOW
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for m in (M, 37):
            x, weights, biases = random_problem(SPEC, m)
            y = mod.mlp(x, weights, biases)
            assert_matches(y, reference(SPEC, x, weights, biases), "fp32")
    assert slow_path_warnings(caught) == [
        f"mlpgen: {mod.__name__} launches through triton's public API (the slow path): "
        "mlpgen.runtime's direct launch supports triton 3.6, not 3.99.0"
    ]


@pytest.mark.interpret
@pytest.mark.parametrize("case", ["supported", "switched off", "not installed"])
def test_the_module_says_why_it_has_no_runtime(load_generated, monkeypatch, case):
    """Under the interpreter a supported triton needs no reason (the interpreter is chosen, not
    a fallback); MLPGEN_RUNTIME=0 and a missing mlpgen are named."""
    import sys

    monkeypatch.setattr(triton, "__version__", "3.6.0")
    if case == "switched off":
        monkeypatch.setenv("MLPGEN_RUNTIME", "0")
    if case == "not installed":
        monkeypatch.setitem(sys.modules, "mlpgen.runtime", None)  # import fails
        monkeypatch.delattr(sys.modules["mlpgen"], "runtime")
    mod, _ = load_generated(SPEC)
    want = {
        "supported": None,
        "switched off": "MLPGEN_RUNTIME=0",
        "not installed": "mlpgen is not installed (pip install mlpgen)",
    }[case]
    assert mod._RT is None and mod._SLOW == want
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod.mlp(*random_inputs())
    assert len(slow_path_warnings(caught)) == (want is not None)


def random_inputs():
    from mlpgen.verify import random_problem

    return random_problem(SPEC, M)


@pytest.mark.interpret
def test_the_runtime_hands_launches_to_the_public_api_once_its_direct_launch_is_off(
    load_generated, monkeypatch
):
    """A compiled kernel without what the direct launch uses switches it off for good; launches
    then go through the module's public launch (here: the interpreter's kernels), still right."""
    from mlpgen.verify import random_problem, reference

    mod, _ = load_generated(SPEC)
    rt = attach(mod, monkeypatch)
    monkeypatch.setattr(mod, "_run", rt.run)
    public = []
    real = mod._run_public
    monkeypatch.setattr(mod, "_run_public", lambda *a: public.append(a[6:]) or real(*a))
    x, weights, biases = random_problem(SPEC, M)
    x = x.contiguous()
    plan = rt.plan(mod.config_for(M, "default"), M, x)
    rt.run(plan.kernel, plan.grid, [x, x.new_empty(M, 7), *mod._join(weights, biases), M], 4, 1, 6)
    assert not rt.fast and public == []  # the interpreter's launch returns no compiled kernel
    y = mod.mlp(x, weights, biases)
    assert public == [(None, False)]  # device and PDL passed on
    assert_matches(y, reference(SPEC, x, weights, biases), "fp32")


# -- the training launches ----------------------------------------------------------------------

TRAIN_TILES = {"block_m": 16, "block_n": 16, "block_k": 16}
# what mlpgen.runtime.train's launcher reads of an input on GPU 0
CUDA_X = types.SimpleNamespace(is_cuda=True, get_device=lambda: 0, device="cuda:0")


def test_training_launches_take_the_runtime_on_a_gpu_only(load_generated, monkeypatch):
    """A training launch on a GPU goes to the runtime's run with the kernel's (function,
    constexprs), the grid, the runtime arguments, the config's warps and stages, how many
    leading arguments are the caller's tensors, and x's device; without a runtime, or on the
    CPU (the interpreter), to the public launch with the same; inside torch.compile's op
    (mlpgen.runtime.op), to wrap_triton's launch with the constexprs after the arguments."""
    import contextlib

    from mlpgen.runtime.op import traced_launcher
    from mlpgen.training import TrainConfig

    mod, _ = load_generated(SPEC)
    training = training_of(mod)
    monkeypatch.setattr(training, "swap", lambda device: None)  # no GPU to ask
    cfg = TrainConfig(**TRAIN_TILES, num_warps=2, num_stages=3).to_dict()
    rt = attach(mod, monkeypatch)
    ran, public, wrapped = [], [], []
    monkeypatch.setattr(rt, "run", lambda *a: ran.append(a))
    monkeypatch.setattr(mod, "_run_public", lambda *a: public.append(a))
    function = training.kernels.train_forward
    kernel, grid, args = (function, (20, 33, False, 16, 16, 16)), (3, 2), ["x", "w", 5]
    training.launcher(CUDA_X, cfg)(kernel, grid, args, 2)
    assert ran == [(kernel, grid, args, 2, 3, 2, 0)] and public == []
    training.launcher(torch.empty(5, 20), cfg)(kernel, grid, args, 2)
    assert public == [(kernel, grid, args, 2, 3, 2, None)]
    monkeypatch.setattr(mod, "_RT", None)
    training.launcher(CUDA_X, cfg)(kernel, grid, args, 2)
    assert public[1] == (kernel, grid, args, 2, 3, 2, 0) and len(ran) == 1

    class Wrapped:  # torch.library.wrap_triton's wrapper: records its launch
        def __init__(self, function):
            self.function = function

        def __getitem__(self, grid):
            return lambda *a, **options: wrapped.append((self.function, grid, a, options))

    monkeypatch.setattr(mod, "_RT", rt)
    monkeypatch.setattr(torch.library, "wrap_triton", Wrapped)
    monkeypatch.setattr(torch.cuda, "device", lambda device: contextlib.nullcontext())
    traced_launcher(CUDA_X, cfg["num_warps"], cfg["num_stages"])(kernel, grid, args, 2)
    options = {"num_warps": 2, "num_stages": 3}
    assert wrapped == [(function, grid, ("x", "w", 5, 20, 33, False, 16, 16, 16), options)]
    assert len(ran) == 1 and len(public) == 2


def test_training_kernels_take_runtime_arguments_first_and_specialise_no_integer():
    """Each training kernel's parameters: pointers, then integers, then constexprs (what the
    module passes as (function, constexprs)); every integer is in do_not_specialize, so a
    binary compiled at one M, split or row range is right for every other."""
    import ast

    from mlpgen.training import kernel_names, render_training

    spec = MLPSpec((20, 33, 7), act="gelu", out_act="sigmoid", dtype="fp16")
    tree = ast.parse(render_training(spec))  # the kernels mlpgen.runtime.train loads
    kernels = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    for name in kernel_names(spec):
        params = kernels[name].args.args
        kinds = [
            "constexpr" if p.annotation is not None else "ptr" if p.arg.endswith("_ptr") else "int"
            for p in params
        ]
        assert kinds == sorted(kinds, key=["ptr", "int", "constexpr"].index), name
        (decorator,) = kernels[name].decorator_list
        keywords = {k.arg: ast.literal_eval(k.value) for k in decorator.keywords}
        ints = [p.arg for p, kind in zip(params, kinds) if kind == "int"]
        assert ints and keywords == {"do_not_specialize": ints}, name


class TrainKernel:
    """A training kernel at the module's global as the runtime meets it on a GPU: kernel[grid]
    (the runtime's first launch of a cache key) runs the interpreter's kernel and returns a
    compiled kernel that holds triton's specialisation of those arguments (what picks the
    binary triton compiles: per runtime argument its type and, unless in do_not_specialize,
    16-byte alignment, divisibility by 16 or == 1; per constexpr its value)."""

    def __init__(self, function):
        from triton.runtime.jit import JITFunction

        self.function, self.compiled, self.direct = function, 0, 0
        self.jit = JITFunction(function.fn, **function.kwargs)  # the interpreter's kernel

    def specialisation(self, args):
        from triton._C.libtriton import native_specialize_impl
        from triton.backends.compiler import BaseBackend

        def one(p, v):  # as JITFunction's binder specialises an argument
            if p.is_constexpr:
                return ("constexpr", v)
            specialise, align = not p.do_not_specialize, not p.do_not_specialize_on_alignment
            return tuple(native_specialize_impl(BaseBackend, v, p.is_const, specialise, align))

        return [(p.name, *one(p, v)) for p, v in zip(self.jit.params, args, strict=True)]

    def __getitem__(self, grid):
        def first(*args, num_warps, num_stages):
            self.compiled += 1
            self.function[grid](*args)
            return CompiledTrainKernel(self, self.specialisation(args))

        return first


class CompiledTrainKernel:
    """Its run (the runtime's direct launch) checks that the arguments it is given specialise
    as those it was compiled for (else triton would have run another binary), then runs them."""

    function, packed_metadata = "FUNCTION", "META"

    def __init__(self, kernel, specialisation):
        self.kernel, self.specialisation = kernel, specialisation

    def run(self, g0, g1, g2, stream, function, meta, *rest):
        hooks, args = rest[:3], rest[3:]
        assert (g2, stream, function, meta, hooks) == (1, 77, "FUNCTION", "META", (None,) * 3)
        got = self.kernel.specialisation(args)
        differ = [(a, b) for a, b in zip(self.specialisation, got) if a != b]
        assert not differ, f"{self.kernel.function.__name__}: compiled for, given: {differ}"
        self.kernel.direct += 1
        self.kernel.function[(g0, g1)](*args)


def misaligned_copy(t):
    """t's values in memory one element past a 16-byte-aligned address."""
    return torch.empty(t.numel() + 1, dtype=t.dtype)[1:].view(t.shape).copy_(t)


# (M, what is misaligned): M == 1, multiples of 16 and others, the weight gradient's rows in 3
# and in 16 splits (fp32 partials) or in one; then x, dy, the parameters misaligned in turn
TRAIN_STEPS = [(37, None), (1, None), (16, None), (256, None), (48, None)]
TRAIN_STEPS += [(37, "x"), (37, "dy"), (37, "params")]


@pytest.mark.interpret
@pytest.mark.parametrize("layout", ["layers", "fused", "split_k"])
@pytest.mark.parametrize(
    "spec",
    [
        MLPSpec((20, 33, 7), act="gelu", dtype="fp16"),  # dy is the last layer's dZ
        MLPSpec((20, 33, 7), act="silu", out_act="sigmoid", dtype="fp16", bias=False),
    ],
    ids=lambda s: s.name,
)
def test_direct_training_launches_run_the_binary_triton_would_pick(
    load_generated, monkeypatch, spec, layout
):
    """Training steps on a GPU launch through the runtime, directly after a cache key's first
    launch (key: the kernel and its constexprs, device, warps, stages, alignment of the
    caller's tensors): at every M, split and alignment of TRAIN_STEPS each direct launch's
    arguments specialise as those its binary was compiled for, the forward kernels compile
    once per layer, every kernel launched is launched directly too, and the gradients are
    eager's (x's and, layer-wise, the last layer's only: a weight-gradient launch a layer)."""
    from test_autograd import sequential
    from test_training import check_grads

    from mlpgen.training import TrainConfig, kernel_names

    mod, _ = load_generated(spec)
    attach(mod, monkeypatch)
    monkeypatch.setattr(lanes, "_current_device", lambda: 0)  # CUDA_X's device
    training = training_of(mod)
    monkeypatch.setattr(training, "swap", lambda device: None)  # no GPU to ask
    kernels = {n: TrainKernel(getattr(training.kernels, n)) for n in kernel_names(spec)}
    for name, kernel in kernels.items():
        monkeypatch.setattr(training.kernels, name, kernel)
    fused, split_k = layout == "fused", layout == "split_k"
    cfg = TrainConfig(**TRAIN_TILES, split=16, fused=fused, split_k=split_k).to_dict()
    launch = training.launcher(CUDA_X, cfg)
    model = mod.FusedMLP.from_module(
        sequential(spec.widths, spec.act, spec.out_act, spec.bias).half()
    )
    params = [p.detach() for p in model.parameters()]
    need_layer = None if fused else [False, True]
    for i, (m, moved) in enumerate(TRAIN_STEPS):
        torch.manual_seed(i)
        x = torch.randn(m, 20).half()
        dy = (torch.randn(m, 7) / m**0.5).half()
        step = {
            "x": misaligned_copy(x) if moved == "x" else x,
            "dy": misaligned_copy(dy) if moved == "dy" else dy,
            "params": [misaligned_copy(p) for p in params] if moved == "params" else params,
        }
        weights, biases = mod._split(step["params"])
        y, hs, zs = training.train_forward(step["x"], weights, biases, cfg, launch)
        dx, flat = training.train_backward(
            step["dy"], step["x"], y, hs, zs, weights, cfg, launch, True, need_layer
        )
        grads = training.layer_grads(flat, need_layer or [True, True])
        which = [0] + [1 + j for j, g in enumerate(grads) if g is not None]
        check_grads(spec, [dx] + [g for g in grads if g is not None], model, x, dy, which)
        if i == 4:  # the aligned steps: one binary a layer's forward, whatever M
            forward = {"layers": "train_forward", "split_k": "train_forward_partial"}
            assert kernels[forward.get(layout, "train_forward_fused")].compiled == 1 + (not fused)
    launched = {name for name, kernel in kernels.items() if kernel.compiled}
    layers = {"train_forward", "train_dgrad", "train_wgrad"} | {"train_dout"} & set(kernels)
    # split_k: every layer's forward and dx split their reductions of 2 and 3 steps (the
    # top layer's input gradient sums 7: one step)
    split = {f"train_{k}_{p}" for k in ("forward", "dgrad") for p in ("partial", "sum")}
    split |= {"train_dgrad", "train_wgrad"} | {"train_dout"} & set(kernels)
    fused_names = {"train_forward_fused", "train_backward_fused", "train_wgrad_fused"}
    expect = {"layers": layers, "fused": fused_names, "split_k": split}[layout]
    assert launched == expect | {"train_reduce"}
    assert all(kernels[name].direct for name in launched)


def test_cluster_compiled_leaves_tritons_cached_kernel_unchanged():
    """triton's warmup returns its cached kernel for a second plan of the same specialisation:
    each plan gets the cluster metadata, the cached kernel keeps triton's own."""

    class Compiled:
        packed_metadata = (4, 1, 1000)
        function = None

    cached = Compiled()
    kernel = type("Kernel", (), {"warmup": lambda self, *a, **k: cached})()
    first = lanes.cluster_compiled(kernel, 16, 512, (8, 1, 1), [], 4, 1)
    second = lanes.cluster_compiled(kernel, 16, 512, (8, 1, 1), [], 4, 1)
    assert first.packed_metadata == second.packed_metadata == (4, 16, 1008 + 512)
    assert cached.packed_metadata == (4, 1, 1000)
