"""The generated module inside real models on a GPU: gradients against eager, the torch.library
op (opcheck), torch.compile(fullgraph=True) and mode="reduce-overhead", CUDA-graph capture and
replay, autocast, a second GPU, and each launch path: mlpgen.runtime's direct launch, its native
lane (kernels and cuBLASLt GEMMs), cluster launches, and triton's public API. Run with:
MLPGEN_TEST_GPU=1 pytest -q -m gpu"""

import sys

import pytest
import torch
import triton
from conftest import assert_matches
from torch import nn

from mlpgen import runtime
from mlpgen.runtime import native
from mlpgen.spec import MLPSpec
from mlpgen.verify import TOLERANCE, reference, rel_error

pytestmark = pytest.mark.gpu
needs_runtime = pytest.mark.skipif(
    runtime.unsupported("native") is not None, reason=str(runtime.unsupported("native"))
)
HEADLINE = (256, 512, 256)
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


@pytest.fixture
def make(load_generated, monkeypatch):
    """(module, eager nn.Sequential on the GPU in the module's dtype, FusedMLP adopted from it)."""

    def build(widths=HEADLINE, act="gelu", dtype="fp16", **kw):
        spec = MLPSpec(tuple(widths), act=act, dtype=dtype, **kw)
        mod, _ = load_generated(spec)
        monkeypatch.setitem(sys.modules, mod.__name__, mod)  # dynamo looks globals up by module
        seq = mod.FusedMLP().to_module().cuda()  # nn.Linear's init, the module's dtype
        return mod, seq, mod.FusedMLP.from_module(seq)

    torch._dynamo.reset()
    yield build
    torch._dynamo.reset()


def grads(module, x):
    return [x.grad] + [p.grad for p in module.parameters()]


def assert_grads_close(got, want, dtype):
    for i, (g, w) in enumerate(zip(got, want)):
        assert g is not None and g.dtype == w.dtype, i
        assert rel_error(g, w.float()) <= TOLERANCE[dtype], i


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("lead", [(1,), (37,), (4, 250)])
def test_gradients_match_eager(make, dtype, lead):
    """Fused forward + recomputing backward vs the eager nn.Sequential, in the layer dtype."""
    mod, seq, fused = make(dtype=dtype)
    x = torch.randn(*lead, 256, device="cuda", dtype=DTYPES[dtype])
    dy = torch.randn(*lead, 256, device="cuda", dtype=DTYPES[dtype])
    xs, xf = x.clone().requires_grad_(), x.clone().requires_grad_()
    ys, yf = seq(xs), fused(xf)
    assert rel_error(yf, ys.float()) <= TOLERANCE[dtype]
    ys.backward(dy)
    yf.backward(dy)
    assert_grads_close(grads(fused, xf), grads(seq, xs), dtype)


def test_gradients_match_eager_odd_spec(make):
    mod, seq, fused = make((100, 300, 200, 7), act="silu", out_act="tanh", dtype="fp16")
    x = torch.randn(999, 100, device="cuda", dtype=torch.float16)
    xs, xf = x.clone().requires_grad_(), x.clone().requires_grad_()
    seq(xs).float().square().sum().backward()  # a loss whose gradient depends on y
    fused(xf).float().square().sum().backward()
    assert_grads_close(grads(fused, xf), grads(seq, xs), "fp16")


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_opcheck(make, dtype):
    mod, _, fused = make(dtype=dtype)
    x = torch.randn(37, 256, device="cuda", dtype=DTYPES[dtype], requires_grad=True)
    params = [p.detach().requires_grad_() for p in fused.parameters()]
    torch.library.opcheck(mod.OP, (x, params))
    torch.library.opcheck(mod.OP, (x.detach(), [p.detach() for p in params]))


def projected(y, r):
    """A loss whose gradient is r, whatever y: after model_around's LayerNorm, sum(y^2) is
    nearly constant and its fp16 gradients would be rounding noise."""
    return (y.float() * r).sum()


def model_around(fused, dtype):
    """A model with ops before and after the FusedMLP, as it sits in real networks."""
    return nn.Sequential(
        nn.Linear(64, 256, device="cuda", dtype=dtype), fused, nn.LayerNorm(256).cuda().to(dtype)
    )


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_compile_fullgraph_matches_eager(make, dtype):
    from torch._dynamo.testing import CompileCounterWithBackend

    mod, _, fused = make(dtype=dtype)
    model = model_around(fused, DTYPES[dtype])
    counter = CompileCounterWithBackend("inductor")
    compiled = torch.compile(model, backend=counter, fullgraph=True)
    x = torch.randn(300, 64, device="cuda", dtype=DTYPES[dtype])
    with torch.no_grad():
        assert rel_error(compiled(x), model(x).float()) <= TOLERANCE[dtype]
    assert counter.frame_count == 1
    assert mod.OP_NAME.replace("::", ".") in counter.graphs[0].code
    # training through the compiled graph: the op's registered autograd
    r = torch.randn(300, 256, device="cuda")
    projected(compiled(x), r).backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    projected(model(x), r).backward()
    assert_grads_close(got, [p.grad for p in model.parameters()], dtype)


def test_compile_dynamic_batch(make):
    """dynamic=True: M is symbolic; the config is chosen by the traced size, correct for all."""
    mod, seq, fused = make(dtype="fp16")
    compiled = torch.compile(fused, fullgraph=True, dynamic=True)
    with torch.no_grad():
        for m in (37, 1000, 5, 4099):
            x = torch.randn(m, 256, device="cuda", dtype=torch.float16)
            assert rel_error(compiled(x), seq(x).float()) <= TOLERANCE["fp16"], m


@pytest.mark.parametrize("m", [1, 37, 4096])
def test_cuda_graph_capture_and_replay(make, m):
    mod, seq, fused = make(dtype="fp16")
    static_x = torch.randn(m, 256, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm up (compiles the kernel) off the capture
            for _ in range(3):
                fused(static_x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = fused(static_x)
        for _ in range(3):
            x = torch.randn_like(static_x)
            static_x.copy_(x)
            graph.replay()
            # fresh inputs each replay: a graph that replayed stale data fails against eager.
            # Not bitwise against a call: split (the default at 1-64 rows) sums in fp32
            # atomics, in whatever order the programs arrive (last-bit differences on the H200)
            assert rel_error(static_y, seq(x).float()) <= TOLERANCE["fp16"]
            assert rel_error(static_y, fused(x).float()) <= TOLERANCE["fp16"]


def test_cuda_graph_capture_of_a_training_step(make):
    """Forward and backward (the autograd Function, torch backward) captured in one graph."""
    mod, seq, fused = make(dtype="fp16")
    static_x = torch.randn(128, 256, device="cuda", dtype=torch.float16, requires_grad=True)
    dy = torch.randn(128, 256, device="cuda", dtype=torch.float16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fused(static_x).backward(dy)
    torch.cuda.current_stream().wait_stream(side)
    fused.zero_grad(set_to_none=True)
    static_x.grad = None
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fused(static_x).backward(dy)
    new = torch.randn_like(static_x)
    with torch.no_grad():
        static_x.copy_(new)
    graph.replay()
    xs = new.clone().requires_grad_()
    seq(xs).backward(dy)
    assert_grads_close(grads(fused, static_x), grads(seq, xs), "fp16")


def test_compile_reduce_overhead(make):
    mod, _, fused = make(dtype="fp16")
    model = model_around(fused, torch.float16)
    compiled = torch.compile(model, mode="reduce-overhead", fullgraph=True)
    with torch.no_grad():
        for _ in range(4):  # warm-up, recording, then replays of the CUDA graph
            x = torch.randn(64, 64, device="cuda", dtype=torch.float16)
            y = compiled(x).clone()
            assert rel_error(y, model(x).float()) <= TOLERANCE["fp16"]
    for _ in range(3):  # training steps under CUDA graphs
        x = torch.randn(64, 64, device="cuda", dtype=torch.float16)
        r = torch.randn(64, 256, device="cuda")
        model.zero_grad(set_to_none=True)
        projected(compiled(x), r).backward()
        got = [p.grad.clone() for p in model.parameters()]
        model.zero_grad(set_to_none=True)
        projected(model(x), r).backward()
        assert_grads_close(got, [p.grad for p in model.parameters()], "fp16")


def test_autocast_with_fp32_parameters(make):
    """Mixed precision: fp32 master weights, the fp16 kernel under torch.autocast."""
    mod, seq, fused = make(dtype="fp16")
    seq, fused = seq.float(), fused.float()
    x = torch.randn(300, 256, device="cuda", requires_grad=True)
    xs = x.detach().clone().requires_grad_()
    with torch.autocast("cuda", dtype=torch.float16):
        yf, ys = fused(x), seq(xs)
    assert yf.dtype == ys.dtype == torch.float16
    assert rel_error(yf, ys.float()) <= TOLERANCE["fp16"]
    yf.float().sum().backward()
    ys.float().sum().backward()
    assert fused.linears[0].weight.grad.dtype == torch.float32
    assert_grads_close(grads(fused, x), grads(seq, xs), "fp16")
    with pytest.raises(TypeError, match="torch.autocast"):
        fused(x)  # fp32 weights without autocast: refused, not silently computed


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_second_gpu_uses_its_device(make):
    """A module on cuda:1 while cuda:0 is current: launched on cuda:1, with cuda:1's config."""
    mod, seq, fused = make(dtype="fp16")
    seq, fused = seq.to("cuda:1"), fused.to("cuda:1")
    torch.cuda.set_device(0)
    for m in (1, 1000):
        x = torch.randn(m, 256, device="cuda:1", dtype=torch.float16)
        with torch.no_grad():
            y = fused(x)
        assert y.device == x.device and torch.cuda.current_device() == 0
        weights, biases = [lin.weight for lin in fused.linears], [lin.bias for lin in fused.linears]
        spec = MLPSpec.from_dict(mod.SPEC)
        assert_matches(y, reference(spec, x, weights, biases), "fp16")
    assert mod.gpu_key(torch.device("cuda", 1)).endswith(
        f"|{torch.cuda.get_device_properties(1).multi_processor_count}"
    )


@pytest.mark.parametrize(
    "graph_config",
    [
        dict(strategy="split", block_m=16, chunk=32, block_n=256, block_k=128),
        dict(strategy="persist", block_m=16, block_n=32, block_k=64, num_stages=3),
    ],
    ids=lambda c: c["strategy"],
)
def test_cuda_graph_capture_runs_the_graph_winner(load_generated, graph_config):
    """A bucket whose CUDA-graph winner differs from its winner for calls: warm-up outside the
    capture compiles both and gives the graph winner its own workspace; the capture records
    the graph winner on it (no zeroing captured); replays are right and leave it fit for the
    next (its counters' low bits zero), and calls outside the graph still run the call winner
    on the shared workspace."""
    from mlpgen.emit import entry, with_graph_winner
    from mlpgen.spec import KernelConfig
    from mlpgen.tune import gpu_key

    spec = MLPSpec(HEADLINE, act="gelu")
    calls = KernelConfig("stream", block_m=16, block_n=64, chunk=64, num_warps=8, num_stages=3)
    graph_cfg = KernelConfig(**graph_config)
    cell = with_graph_winner(entry(calls, us=11.7, host_us=15.0), graph_cfg, 4.1)
    mod, _ = load_generated(spec, gpu_key=gpu_key(0), table={64: cell})
    static_x = torch.randn(64, 256, device="cuda", dtype=torch.float16)
    w = [
        torch.randn(512, 256, device="cuda", dtype=torch.float16) / 16,
        torch.randn(256, 512, device="cuda", dtype=torch.float16) / 23,
    ]
    b = [
        torch.randn(512, device="cuda", dtype=torch.float16) / 10,
        torch.randn(256, device="cuda", dtype=torch.float16) / 10,
    ]
    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                mod.mlp(static_x, w, b)
        torch.cuda.current_stream().wait_stream(side)
        plans = {} if mod._RT is None else mod._RT.plans  # the public path caches none
        graph_plan = plans.get((0, 64, True))
        if mod._RT is not None:
            assert graph_plan.cfg["kernel"] == graph_cfg.kernel_name
            assert graph_plan.ws is not None  # its own workspace, made before the capture
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = mod.mlp(static_x, w, b)
        for _ in range(3):
            x = torch.randn_like(static_x)
            static_x.copy_(x)
            graph.replay()
            torch.cuda.synchronize()
            assert_matches(static_y, reference(spec, x, w, b), "fp16")
            assert_matches(mod.mlp(x, w, b), reference(spec, x, w, b), "fp16")
            # the counters: split's left zero by every replay, persist's low bits too
            assert graph_plan is None or not (graph_plan.ws[-1] & 0x7FFFFFFF).any()
        assert mod._RT is None or plans[(0, 64, False)].cfg["kernel"] == calls.kernel_name


LANE_CONFIGS = {  # strategy -> (a config, whether its lane launches the kernel itself)
    "split": (dict(strategy="split", block_m=16, chunk=32, block_n=256, block_k=128), True),
    "cluster": (dict(strategy="cluster", block_m=16, chunk=32, block_k=128), True),
    "stream": (dict(strategy="stream", block_m=16, block_n=64, chunk=64, num_warps=8), True),
    "persist": (dict(strategy="persist", block_m=64, block_n=64, block_k=64), True),
    "stream_tma": (
        dict(strategy="stream", block_m=128, block_n=64, chunk=64, num_warps=8, num_stages=2)
        | dict(tma=True),
        False,
    ),
    "torch": (dict(strategy="torch"), False),
}


@needs_runtime
@pytest.mark.parametrize("strategy", sorted(LANE_CONFIGS))
def test_calls_take_the_lane(load_generated, monkeypatch, strategy):
    """After a bucket's first call, inference calls take its (Python) lane: one-launch
    strategies launch their compiled kernel directly (addresses as ints), the others run their
    plan without the general path's layers. Right on fresh inputs each call, at a batch that is
    no multiple of the block, from FusedMLP and from mlp(), with leading batch dims too; a
    misaligned input steps off a kernel lane. (The native lane, which would take the kernel
    lanes' calls first, is off here: test_calls_take_the_native_lane.)"""
    from mlpgen.emit import entry
    from mlpgen.spec import KernelConfig
    from mlpgen.tune import gpu_key

    spec = MLPSpec(HEADLINE, act="gelu")
    config, launches_itself = LANE_CONFIGS[strategy]
    mod, _ = load_generated(spec, gpu_key=gpu_key(0), table={64: entry(KernelConfig(**config))})
    monkeypatch.setattr(native, "_BUILT", {"module": None})  # as if it could not be built
    fused = mod.FusedMLP().cuda()
    w = [lin.weight.detach() for lin in fused.linears]
    b = [lin.bias.detach() for lin in fused.linears]
    m = 37
    with torch.no_grad():
        fused(torch.randn(m, 256, device="cuda", dtype=torch.float16))  # plans, compiles
        lane = mod._RT.lanes[(0, m)]
        assert mod._RT.plans[(0, m, False)].lane is lane
        assert (lane.run is not None, lane.call is None) == (launches_itself, launches_itself)
        if launches_itself:  # on triton 3.6 (its launcher verified) the C launch, else the launcher
            direct = getattr(lane.run, "__name__", None) == "launch"
            assert direct == triton.__version__.startswith("3.6."), lane.run
        taken = []
        if launches_itself:
            real = lane.run
            lane.run = lambda *a: taken.append(a) or real(*a)
        else:
            real = lane.call
            lane.call = lambda *a: taken.append(a) or real(*a)
        for call in (fused, lambda x: mod.mlp(x, w, b)) * 2:
            x = torch.randn(m, 256, device="cuda", dtype=torch.float16)
            assert_matches(call(x), reference(spec, x, w, b), "fp16")
        x = torch.randn(1, m, 256, device="cuda", dtype=torch.float16)  # leading dims: a view
        y = fused(x)
        assert y.shape == (1, m, 256) and len(taken) == 5
        assert_matches(y[0], reference(spec, x[0], w, b), "fp16")
        taken.pop()
        assert len(taken) == 4
        odd = torch.randn(m * 256 + 1, device="cuda", dtype=torch.float16)[1:].view(m, 256)
        assert_matches(fused(odd), reference(spec, odd, w, b), "fp16")
        assert len(taken) == (4 if launches_itself else 5)  # a plan lane takes it too
        x = torch.randn(m, 256, device="cuda", dtype=torch.float16)
        out = torch.full((m, 256), float("nan"), device="cuda", dtype=torch.float16)
        assert fused(x, out=out) is out  # out=: the lane writes into it
        assert len(taken) == (5 if launches_itself else 6)
        assert_matches(out, reference(spec, x, w, b), "fp16")


class NativeLaneCase:
    """The headline with one table cell (config at 64 rows) on GPU 0, the native lane's cache in
    a test folder; fresh fp16 inputs, the fp32 reference, and a count of the native lane's calls
    (each: whether it took the call)."""

    def __init__(self, load_generated, config, native_cache, monkeypatch, act="gelu"):
        from mlpgen.emit import entry
        from mlpgen.tune import gpu_key

        monkeypatch.setenv("MLPGEN_CACHE", native_cache)
        self.spec = MLPSpec(HEADLINE, act=act)
        self.mod, _ = load_generated(self.spec, gpu_key=gpu_key(0), table={64: entry(config)})
        self.fused = self.mod.FusedMLP().cuda()
        self.w = [lin.weight.detach() for lin in self.fused.linears]
        self.b = [lin.bias.detach() for lin in self.fused.linears]
        self.taken = []

    def fresh(self, *shape):
        return torch.randn(*shape, device="cuda", dtype=torch.float16)

    def close(self, y, x):
        return rel_error(y, reference(self.spec, x, self.w, self.b)) <= TOLERANCE["fp16"]

    def count(self):
        """Wrap the module's native call (again: registering a lane sets it anew)."""
        calls = self.mod._RT.native
        real = self.real = calls[0]

        def counted(*args):
            y = real(*args)
            self.taken.append(y is not None)
            return y

        calls[0] = counted


@needs_runtime
def test_epilogue_calls_take_the_native_lane(load_generated, native_cache, monkeypatch):
    """The epilogue strategy's two cuBLASLt GEMMs (tanh GELU in the first's epilogue), run by
    one native-lane call: right on fresh inputs each call (a batch that is no multiple of the
    block), back to back without a sync (the hidden buffer is the lane's, reused by the next
    call), into out=, from a lane made before the workspace grew; under CUDA-graph capture it
    declines and the captured calls replay right."""
    from mlpgen.spec import KernelConfig

    config = KernelConfig(strategy="epilogue")
    case = NativeLaneCase(load_generated, config, native_cache, monkeypatch, "gelu_tanh")
    mod, fused, fresh, close, taken = case.mod, case.fused, case.fresh, case.close, case.taken
    m = 37

    with torch.no_grad():
        fused(fresh(m, 256))  # plans, opens the lane
        lane = native.build()
        assert lane is not None
        assert lane.lanes(mod._RT.native[1]) == [(0, m, 0, 1, 2)]  # two GEMMs (0 threads)
        case.count()
        xs = [fresh(m, 256) for _ in range(6)]
        ys = [call(x) for call, x in zip((fused, lambda x: mod.mlp(x, case.w, case.b)) * 3, xs)]
        assert all(close(y, x) for y, x in zip(ys, xs)) and taken == [True] * 6  # one sync
        taken.clear()
        out = torch.full((m, 256), float("nan"), device="cuda", dtype=torch.float16)
        assert fused(xs[0], out=out) is out and close(out, xs[0]) and taken == [True]
        big = fresh(3000, 256)  # a larger batch grows the device's workspace
        assert close(fused(big), big)
        assert mod._RT.native[0] is case.real  # registering its lane set the call again
        case.count()
        taken.clear()
        assert close(fused(xs[1]), xs[1]) and taken == [True]  # its old buffer, still kept
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                fused(xs[2])
        torch.cuda.current_stream().wait_stream(side)
        taken.clear()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = [fused(x) for x in xs[:2]]
        assert taken == [False, False]  # declined: the Python lane's buffers, the graph's
        for x in xs[:2]:
            x.copy_(fresh(m, 256))
        graph.replay()
        torch.cuda.synchronize()
        assert all(close(y, x) for y, x in zip(captured, xs[:2]))


@needs_runtime
@pytest.mark.parametrize("strategy", sorted(s for s, (_, own) in LANE_CONFIGS.items() if own))
def test_calls_take_the_native_lane(load_generated, strategy, native_cache, monkeypatch):
    """A kernel lane is given to the native lane, which takes its inference calls: right on
    fresh inputs each call (a batch that is no multiple of the block), from FusedMLP and mlp(),
    with leading dims, into out=, on a side stream; and it leaves to the Python lane and the
    general path what it must not take: a misaligned view, an input needing a gradient, an
    out= overlapping the input, another dtype, a batch without a lane yet."""
    from mlpgen.spec import KernelConfig

    config = KernelConfig(**LANE_CONFIGS[strategy][0])
    case = NativeLaneCase(load_generated, config, native_cache, monkeypatch)
    mod, fused, fresh, close, taken = case.mod, case.fused, case.fresh, case.close, case.taken
    w, b = case.w, case.b
    m = 37

    with torch.no_grad():
        fused(fresh(m, 256))  # plans, compiles, opens the lane
    lane = native.build()
    threads = 32 * config.num_warps
    ctas = 16 if strategy == "cluster" else 1  # cluster: 512 hidden columns in chunks of 32
    assert lane is not None and lane.lanes(mod._RT.native[1]) == [(0, m, threads, ctas, 1)]
    case.count()
    with torch.no_grad():
        for call in (fused, lambda x: mod.mlp(x, w, b)) * 2:
            x = fresh(m, 256)
            assert close(call(x), x)
        assert taken == [True] * 4
        x = fresh(1, m, 256)  # leading dims: declined as they are, taken on the view
        y = fused(x)
        assert y.shape == (1, m, 256) and close(y[0], x[0]) and taken[4:] == [False, True]
        taken.clear()
        out = torch.full((m, 256), float("nan"), device="cuda", dtype=torch.float16)
        assert fused(x[0], out=out) is out and close(out, x[0]) and taken == [True]
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            x = fresh(m, 256)
            y = fused(x)
        side.synchronize()
        assert close(y, x) and taken == [True, True]
        taken.clear()
        odd = fresh(m * 256 + 1)[1:].view(m, 256)  # 2-byte aligned: the Python lane's to refuse
        assert close(fused(odd), odd) and taken == [False]
        both = fresh(m * 256 * 2)
        with pytest.raises(ValueError, match="share memory"):
            fused(both[: m * 256].view(m, 256), out=both[m * 128 : m * 384].view(m, 256))
        with pytest.raises(TypeError, match="float16"):
            fused(torch.randn(m, 256, device="cuda"))
        x = fresh(m + 1, 256)  # a new batch: its first call opens its lane
        assert close(fused(x), x) and taken == [False, False, False, False]
        lanes = [(0, m, threads, ctas, 1), (0, m + 1, threads, ctas, 1)]
        assert lane.lanes(mod._RT.native[1]) == lanes
        assert mod._RT.native[0] is case.real  # registering a lane set it again
        case.count()
    taken.clear()
    x = fresh(m, 256).requires_grad_()
    y = fused(x)
    assert y.requires_grad and close(y.detach(), x.detach()) and taken == [False]


@pytest.mark.parametrize("strategy", sorted(LANE_CONFIGS))
def test_the_public_path_runs_every_strategy(load_generated, monkeypatch, strategy):
    """MLPGEN_RUNTIME=0 (as where mlpgen.runtime is missing or refuses this triton): every
    launch goes through kernel[grid], right at a batch no multiple of the block, one warning
    naming why; a cluster cell, which needs the runtime's launch, runs the heuristic default's
    cell instead."""
    import warnings

    from mlpgen.emit import entry
    from mlpgen.spec import KernelConfig
    from mlpgen.tune import gpu_key

    monkeypatch.setenv("MLPGEN_RUNTIME", "0")
    spec = MLPSpec(HEADLINE, act="gelu")
    cell = entry(KernelConfig(**LANE_CONFIGS[strategy][0]))
    mod, _ = load_generated(spec, gpu_key=gpu_key(0), table={64: cell})
    assert mod._RT is None and mod._SLOW == "MLPGEN_RUNTIME=0"
    fused = mod.FusedMLP().cuda()
    w = [lin.weight.detach() for lin in fused.linears]
    b = [lin.bias.detach() for lin in fused.linears]
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for m in (37, 37, 64):
            x = torch.randn(m, 256, device="cuda", dtype=torch.float16)
            assert_matches(fused(x), reference(spec, x, w, b), "fp16")
    ran = mod.config_for(37, gpu_key(0))  # the cell the calls ran (a cluster cell: _fallback's)
    ran = mod._fallback(ran, 37, x) if strategy == "cluster" else ran
    slow = [w for w in caught if "public API" in str(w.message)]
    assert len(slow) == (mod.launch_kind(ran) not in mod._TORCH_PATHS)  # once, where launched
    if strategy == "cluster":
        assert ran["strategy"] != "cluster" and ran is mod.pick_cell(mod.TUNED["default"], 37)
    else:
        assert ran is cell or ran == cell


@needs_runtime
def test_the_runtime_launches_clusters_with_opted_in_shared_memory(load_generated):
    """mlpgen.runtime compiles a cluster kernel without launching it, sets its launch metadata
    to its cluster size and triton's shared memory plus the receive buffer (opted in past
    48 KiB) and launches it directly: right on fresh inputs."""
    from mlpgen.emit import entry
    from mlpgen.spec import KernelConfig
    from mlpgen.tune import gpu_key

    spec = MLPSpec(HEADLINE, act="gelu")
    config = KernelConfig(**LANE_CONFIGS["cluster"][0])
    mod, _ = load_generated(spec, gpu_key=gpu_key(0), table={16: entry(config)})
    assert mod._RT is not None and mod._RT.clusters_run(torch.empty(1, device="cuda"))
    fused = mod.FusedMLP().cuda()
    w = [lin.weight.detach() for lin in fused.linears]
    b = [lin.bias.detach() for lin in fused.linears]
    with torch.no_grad():
        for _ in range(3):
            x = torch.randn(16, 256, device="cuda", dtype=torch.float16)
            assert_matches(fused(x), reference(spec, x, w, b), "fp16")
    kernel = mod.KERNELS[config.kernel_name]
    ctas, buffer = mod._CLUSTER_LAUNCH[kernel]
    compiled = [c for k, c in mod._RT.compiled.items() if k[0] is kernel]
    assert compiled and compiled[0].packed_metadata[1] == ctas
    assert compiled[0].packed_metadata[2] >= buffer
