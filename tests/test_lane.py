"""The generated module's lane (the inference fast path: the compiled kernel's launcher called
with the tensors' addresses), on the CPU: a fake launcher stands in for the compiled kernel and
writes the reference result at the output address it is given, so these tests check what the
lane passes (argument order, grid, stream, workspace) and when it steps aside for the general
path. The lane with real kernels is checked on the GPU (tests/test_gpu_module.py)."""

import ctypes

import pytest
import torch

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


@pytest.fixture
def laned(load_generated, monkeypatch):
    """(module, FusedMLP, fake launcher): the module has a lane for CPU tensors of M rows."""
    mod, _ = load_generated(SPEC)
    fused = mod.FusedMLP()
    weights = [lin.weight.detach() for lin in fused.linears]
    biases = [lin.bias.detach() for lin in fused.linears]
    fake = FakeLaunch(mod, weights, biases)
    lane = mod._Lane()
    lane.run, lane.function, lane.meta, lane.g0, lane.g1 = fake, "FUNCTION", "META", 3, 2
    lane.keep, lane.tail = [], [WS_ADDRESS, M]
    lane.like, lane.device = mod._output_like(torch.empty(M, 20), M), -1  # a CPU tensor's
    monkeypatch.setitem(mod._LANES, (-1, M), lane)
    monkeypatch.setattr(mod, "_current_device", lambda: -1)
    monkeypatch.setattr(mod, "_raw_stream", lambda device: 77)
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


def test_the_lane_steps_aside_on_another_current_device(laned, monkeypatch):
    mod, fused, fake = laned
    monkeypatch.setattr(mod, "_current_device", lambda: 0)
    with torch.no_grad():
        fused(torch.randn(M, 20))
    assert fake.calls == []


def test_the_lane_leaves_refusals_to_the_general_path(laned):
    mod, fused, fake = laned
    w, b = weights_biases(fused)
    with pytest.raises(TypeError, match="expected a torch.float32 input"):
        mod.mlp(torch.randn(M, 20, dtype=torch.float64), w, b)
    with pytest.raises(TypeError, match="the weights are torch.float64"):
        mod.mlp(torch.randn(M, 20), [w[0].double(), w[1]], b)
    with pytest.raises(ValueError, match="expected 2 biases"):
        mod.mlp(torch.randn(M, 20), w, b[:1])
    assert fake.calls == []


@pytest.mark.parametrize("m", [1, 2, 37])
def test_output_template_gives_fresh_contiguous_outputs(load_generated, m):
    mod, _ = load_generated(SPEC)
    like = mod._output_like(torch.empty(m, 20), m)
    y = torch.empty_like(like)
    assert y.shape == (m, 7) and y.stride() == (7, 1) and y.dtype == torch.float32
    assert y.untyped_storage().nbytes() == m * 7 * 4
    assert torch.empty_like(like).data_ptr() != y.data_ptr()


PLAN_LANES = {  # strategies whose lane runs the plan itself (no single kernel launch); the
    # GPU test adds stream_tma, whose descriptors need widths this spec does not have
    "torch": dict(strategy="torch"),
    "layered": dict(strategy="layered", block_m=16, block_n=16, block_k=16),
}


@pytest.mark.parametrize("strategy", sorted(PLAN_LANES))
def test_other_strategies_get_a_lane_that_runs_their_plan(load_generated, monkeypatch, strategy):
    """Several launches or the torch path: the lane calls the plan (_execute), skipping the
    general path's layers, and gives its result."""
    from mlpgen.emit import entry
    from mlpgen.spec import KernelConfig

    cell = entry(KernelConfig(**PLAN_LANES[strategy]))
    mod, _ = load_generated(SPEC, gpu_key="some|sm90|132", table={M: cell})  # its kernels
    monkeypatch.setattr(mod, "_FAST_LAUNCH", [True])  # as on a GPU
    x = torch.randn(M, 20)
    plan = mod._Plan(cell, M, x)
    mod._open_lane(plan, x)
    lane = mod._LANES.pop((None, M))  # a CPU plan's device
    assert plan.lane is lane and lane.call is not None and lane.run is None
    lane.device = -1  # a CPU tensor's get_device(), so that calls find the lane
    monkeypatch.setitem(mod._LANES, (-1, M), lane)
    monkeypatch.setattr(mod, "_FAST_LAUNCH", [False])  # the interpreter's launches
    ran = []
    real = mod._execute
    monkeypatch.setattr(mod, "_execute", lambda *a, **kw: ran.append(a[0]) or real(*a, **kw))
    fused = mod.FusedMLP()
    with torch.no_grad():
        y = fused(x)
    assert ran == [plan]
    w, b = weights_biases(fused)
    torch.testing.assert_close(y, mod.reference(x, w, b), atol=1e-4, rtol=1e-4)


def test_a_lane_waits_for_its_aligned_kernel(load_generated, monkeypatch):
    """A one-launch plan whose kernel is not compiled for aligned tensors yet (a misaligned
    first call) stays without a lane, to be given one by a later call."""
    from mlpgen.emit import entry
    from mlpgen.spec import KernelConfig

    cell = entry(KernelConfig("stream", block_m=16, block_n=16, chunk=16))
    mod, _ = load_generated(SPEC, gpu_key="some|sm90|132", table={M: cell})
    monkeypatch.setattr(mod, "_FAST_LAUNCH", [True])
    x = torch.randn(M, 20)
    plan = mod._Plan(cell, M, x)
    mod._open_lane(plan, x)
    assert plan.lane is None and mod._LANES == {}
