"""The generated module's Python side: FusedMLP, adoption (from_module/to_module), state_dict in
the nn.Sequential layout, dtype refusals, dispatch, input checks."""

import warnings

import pytest
import torch
from conftest import assert_matches
from torch import nn

from mlpgen.runtime import lanes
from mlpgen.spec import MLPSpec


def sequential(widths, act=nn.GELU, dtype=torch.float32, bias=True, out_act=None):
    layers = []
    for i, (k, n) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(nn.Linear(k, n, bias=bias, dtype=dtype))
        if i < len(widths) - 2:
            layers.append(act())
    if out_act is not None:
        layers.append(out_act())
    return nn.Sequential(*layers)


class MLP(nn.Sequential):
    """torchvision.ops.MLP's structure (torchvision is not a dependency): an nn.Sequential of
    Linear, activation, Dropout per hidden layer, then Linear, Dropout."""

    def __init__(self, in_channels, hidden_channels, activation_layer=nn.ReLU, **kw):
        inplace, bias, dropout = kw.get("inplace"), kw.get("bias", True), kw.get("dropout", 0.0)
        params = {} if inplace is None else {"inplace": inplace}
        layers, in_dim = [], in_channels
        for hidden in hidden_channels[:-1]:
            layers += [nn.Linear(in_dim, hidden, bias=bias), activation_layer(**params)]
            layers.append(nn.Dropout(dropout, **params))
            in_dim = hidden
        layers += [nn.Linear(in_dim, hidden_channels[-1], bias=bias)]
        layers.append(nn.Dropout(dropout, **params))
        super().__init__(*layers)


def weights_of(fused):
    return [lin.weight for lin in fused.linears], [lin.bias for lin in fused.linears]


@pytest.fixture
def gelu_mod(load_generated):
    mod, _ = load_generated(MLPSpec((20, 33, 7), act="gelu", dtype="fp32"))
    return mod


@pytest.mark.interpret
def test_from_module_matches_sequential(gelu_mod):
    seq = sequential((20, 33, 7))
    fused = gelu_mod.FusedMLP.from_module(seq)
    x = torch.randn(45, 20)
    torch.testing.assert_close(fused(x), seq(x), atol=1e-4, rtol=1e-4)


ACCEPTED = {
    "plain": lambda: sequential((20, 33, 7)),
    "nested": lambda: nn.Sequential(nn.Sequential(nn.Linear(20, 33), nn.GELU()), nn.Linear(33, 7)),
    "identity": lambda: nn.Sequential(
        nn.Identity(), nn.Linear(20, 33), nn.GELU(), nn.Identity(), nn.Linear(33, 7)
    ),
    "dropout_eval": lambda: nn.Sequential(
        nn.Linear(20, 33), nn.GELU(), nn.Dropout(0.3), nn.Linear(33, 7)
    ).eval(),
    "dropout_p0_training": lambda: nn.Sequential(
        nn.Linear(20, 33), nn.GELU(), nn.Dropout(0.0), nn.Linear(33, 7)
    ),
    "torchvision_mlp": lambda: MLP(20, [33, 7], activation_layer=nn.GELU),
    "torchvision_mlp_dropout_eval": lambda: MLP(20, [33, 7], nn.GELU, dropout=0.2).eval(),
    "float64": lambda: sequential((20, 33, 7), dtype=torch.float64),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_from_module_accepts(gelu_mod, name):
    src = ACCEPTED[name]()
    fused = gelu_mod.FusedMLP.from_module(src)
    assert all(p.dtype == torch.float32 for p in fused.parameters())  # cast to the module dtype
    x = torch.randn(9, 20)
    with torch.no_grad():
        want = src.eval()(x.to(next(src.parameters()).dtype)).float()
        torch.testing.assert_close(fused(x), want, atol=1e-4, rtol=1e-4)


def test_from_module_torchvision_relu_inplace(load_generated):
    mod, _ = load_generated(MLPSpec((8, 16, 16, 4), act="relu", dtype="fp32"))
    src = MLP(8, [16, 16, 4], inplace=True).eval()
    fused = mod.FusedMLP.from_module(src)
    x = torch.randn(5, 8)
    with torch.no_grad():
        torch.testing.assert_close(fused(x), src(x), atol=1e-5, rtol=1e-5)


def test_from_module_adopts_a_lone_linear_as_one_layer(load_generated):
    mod, _ = load_generated(MLPSpec((8, 5), act="relu", dtype="fp32"))
    src = nn.Linear(8, 5)
    fused = mod.FusedMLP.from_module(src)
    x = torch.randn(7, 8)
    with torch.no_grad():
        torch.testing.assert_close(fused(x), src(x), atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="Linear 0 has bias=False"):
        mod.FusedMLP.from_module(nn.Linear(8, 5, bias=False))


def test_from_module_with_out_act(load_generated):
    mod, _ = load_generated(MLPSpec((8, 16, 4), act="silu", out_act="sigmoid", dtype="fp32"))
    src = sequential((8, 16, 4), act=nn.SiLU, out_act=nn.Sigmoid)
    fused = mod.FusedMLP.from_module(src)
    x = torch.randn(5, 8)
    with torch.no_grad():
        torch.testing.assert_close(fused(x), src(x), atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="activations .* at layer 3: got \\(end\\)"):
        mod.FusedMLP.from_module(sequential((8, 16, 4), act=nn.SiLU))


REFUSED = [
    # module, what the message must name
    (lambda: sequential((20, 32, 7)), r"Linear shapes \[\(20, 32\), \(32, 7\)\] do not match"),
    (lambda: sequential((20, 33, 7, 7)), "Linear shapes"),
    (lambda: nn.Linear(20, 7), r"Linear shapes \[\(20, 7\)\] do not match"),
    (lambda: sequential((20, 33, 7), act=nn.ReLU), "activations .* got ReLU"),
    (lambda: sequential((20, 33, 7), act=lambda: nn.GELU("tanh")), "approximate='tanh'"),
    (lambda: sequential((20, 33, 7), bias=False), "Linear 0 has bias=False"),
    (lambda: nn.Sequential(nn.Linear(20, 33), nn.Linear(33, 7)), "activations .* layer 1"),
    (lambda: sequential((20, 33, 7), out_act=nn.GELU), "activations .* layer 3: got GELU"),
    (lambda: nn.Sequential(nn.GELU(), nn.Linear(20, 33), nn.Linear(33, 7)), "layer order"),
    (lambda: MLP(20, [33, 7], nn.GELU, dropout=0.1), r"Dropout\(p=0.1.*training mode"),
    (
        lambda: nn.Sequential(nn.Linear(20, 33), nn.LayerNorm(33), nn.GELU(), nn.Linear(33, 7)),
        "cannot adopt LayerNorm",
    ),
    (lambda: nn.ModuleList([nn.Linear(20, 33), nn.GELU()]), "cannot adopt ModuleList"),
]


@pytest.mark.parametrize("make, message", REFUSED)
def test_from_module_refuses_mismatches(gelu_mod, make, message):
    with pytest.raises(ValueError, match=message):
        gelu_mod.FusedMLP.from_module(make())


def test_to_module_round_trip(gelu_mod):
    fused = gelu_mod.FusedMLP()
    seq = fused.to_module()
    assert type(seq) is nn.Sequential and [type(m) for m in seq] == [nn.Linear, nn.GELU, nn.Linear]
    x = torch.randn(6, 20)
    with torch.no_grad():  # the interpreter's kernel GELU is the tanh fit: 1e-4, not 1e-5
        torch.testing.assert_close(seq(x), fused(x), atol=1e-4, rtol=1e-4)
        seq[0].weight.add_(1.0)  # a copy, not a view
        assert not torch.equal(seq[0].weight, fused.linears[0].weight)
        back = gelu_mod.FusedMLP.from_module(seq)
        torch.testing.assert_close(back(x), seq(x), atol=1e-4, rtol=1e-4)


def test_state_dict_is_the_sequential_layout(gelu_mod):
    fused = gelu_mod.FusedMLP()
    seq = sequential((20, 33, 7))
    keys = ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert list(fused.state_dict()) == list(seq.state_dict()) == keys
    fused.load_state_dict(seq.state_dict())  # Sequential -> FusedMLP
    assert all(torch.equal(a, b) for a, b in zip(fused.parameters(), seq.parameters()))
    other = gelu_mod.FusedMLP()
    seq.load_state_dict(other.state_dict())  # FusedMLP -> Sequential
    assert all(torch.equal(a, b) for a, b in zip(other.parameters(), seq.parameters()))


@pytest.mark.parametrize(
    "make",
    [
        lambda: MLP(20, [33, 7], nn.GELU),  # keys 0.*, 3.*
        lambda: nn.Sequential(nn.Sequential(nn.Linear(20, 33), nn.GELU()), nn.Linear(33, 7)),
        lambda: nn.Sequential(nn.Identity(), nn.Linear(20, 33), nn.GELU(), nn.Linear(33, 7)),
    ],
)
def test_state_dict_loads_other_sequential_layouts(gelu_mod, make):
    src = make()
    fused = gelu_mod.FusedMLP()
    fused.load_state_dict(src.state_dict())
    linears = [m for m in src.modules() if isinstance(m, nn.Linear)]
    for got, want in zip(fused.linears, linears):
        assert torch.equal(got.weight, want.weight) and torch.equal(got.bias, want.bias)


def test_state_dict_inside_a_parent_model(gelu_mod):
    """Swapping a model's nn.Sequential for FusedMLP keeps its checkpoints loadable both ways."""
    old = nn.Sequential(nn.Linear(4, 20), MLP(20, [33, 7], nn.GELU))
    new = nn.Sequential(nn.Linear(4, 20), gelu_mod.FusedMLP())
    new.load_state_dict(old.state_dict())
    assert torch.equal(new[1].linears[1].weight, old[1][3].weight)
    plain = nn.Sequential(nn.Linear(4, 20), sequential((20, 33, 7)))
    plain.load_state_dict(new.state_dict())
    assert torch.equal(plain[1][2].weight, old[1][3].weight)


def test_state_dict_mismatches_are_reported(gelu_mod):
    fused = gelu_mod.FusedMLP()
    with pytest.raises(RuntimeError, match="size mismatch for 0.weight"):
        fused.load_state_dict(sequential((20, 32, 7)).state_dict(), strict=False)
    with pytest.raises(RuntimeError, match="Unexpected key.*4.weight"):
        fused.load_state_dict(sequential((20, 33, 33, 7)).state_dict())


def test_dtype_conversions_are_refused_at_forward(gelu_mod):
    x = torch.randn(3, 20)
    with pytest.raises(TypeError, match="mlpgen --widths 20,33,7 --act gelu --dtype fp16"):
        gelu_mod.FusedMLP().half()(x.half())
    with pytest.raises(
        TypeError, match="layer 0 weight is torch.float64.*fp16, bf16, fp32 modules only"
    ):
        gelu_mod.FusedMLP().double()(x.double())
    with pytest.raises(TypeError, match="the input is torch.bfloat16.*--dtype bf16"):
        gelu_mod.FusedMLP()(x.bfloat16())


def test_input_checks(load_generated):
    mod, _ = load_generated(MLPSpec((8, 4), dtype="fp32"))
    fused = mod.FusedMLP()
    with pytest.raises(ValueError, match=r"\[\.\.\., 8\]"):
        fused(torch.randn(3, 9))
    with pytest.raises(TypeError, match="float32"):
        fused(torch.randn(3, 8, dtype=torch.float64))
    assert fused(torch.randn(0, 8)).shape == (0, 4)
    assert fused(torch.randn(2, 0, 8)).shape == (2, 0, 4)
    nobias, _ = load_generated(MLPSpec((8, 4), dtype="fp32", bias=False))
    with pytest.raises(ValueError, match="without bias"):
        nobias.mlp(torch.randn(2, 8), [torch.randn(4, 8)], [torch.randn(4)])


def test_dispatch_nearest_bucket_and_unknown_gpu_warns_once(load_generated):
    mod, path = load_generated(MLPSpec((8, 4)))
    assert mod.nearest_bucket([1, 16, 64, 256], 1) == 1
    assert mod.nearest_bucket([1, 16, 64, 256], 3) == 1  # the log-scale midpoint of 1, 16 is 4
    assert mod.nearest_bucket([1, 16, 64, 256], 5) == 16
    assert mod.nearest_bucket([1, 16, 64, 256], 40) == 64
    assert mod.nearest_bucket([1, 16, 64, 256], 10**6) == 256
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cell = mod.config_for(1000, "Imaginary GPU|sm99|7")
        mod.config_for(3, "Imaginary GPU|sm99|7")
    assert cell == mod.TUNED["default"][1024]
    assert len(caught) == 1 and f"mlpgen retune {path}" in str(caught[0].message)


def test_cpu_without_interpreter_takes_reference(load_generated, monkeypatch):
    mod, _ = load_generated(MLPSpec((8, 16, 4), dtype="fp32"))
    monkeypatch.setattr(mod, "_INTERPRET", False)
    monkeypatch.setattr(mod, "_run", lambda *a, **k: pytest.fail("kernel launched on CPU"))
    fused = mod.FusedMLP()
    x = torch.randn(5, 8)
    torch.testing.assert_close(fused(x), mod.reference(x, *weights_of(fused)))


def test_call_leaves_to_nn_module_only_what_it_does_besides_forward(load_generated, monkeypatch):
    """FusedMLP(x) calls forward itself where nn.Module.__call__ would only call it, and hands
    everything else to nn.Module: this module's hooks (pre-hooks seeing the arguments as given),
    hooks registered for every module, torch.jit tracing, module.compile()."""
    mod, _ = load_generated(MLPSpec((8, 16, 4), dtype="fp32"))
    monkeypatch.setattr(mod, "_INTERPRET", False)  # the torch path: no kernel on the CPU
    # the __call__ that a module attached to mlpgen.runtime gives its FusedMLP
    call = lanes.fused_call(mod.FusedMLP, mod._module_call)
    monkeypatch.setattr(mod.FusedMLP, "__call__", call, raising=False)
    fused = mod.FusedMLP()
    x = torch.randn(5, 8)
    want = mod.reference(x, *weights_of(fused))
    through = []  # modules that went through nn.Module.__call__
    call_impl = nn.Module._call_impl
    monkeypatch.setattr(
        nn.Module, "_call_impl", lambda m, *a, **k: through.append(m) or call_impl(m, *a, **k)
    )
    torch.testing.assert_close(fused(x), want)
    out = torch.empty(5, 4)
    with torch.no_grad():
        assert fused(x, out=out) is out
    torch.testing.assert_close(out, want)
    assert through == []

    seen = []
    hook = fused.register_forward_pre_hook(
        lambda m, args, kwargs: seen.append(dict(kwargs)) or ((2 * args[0],), kwargs),
        with_kwargs=True,
    )
    torch.testing.assert_close(fused(x), mod.reference(2 * x, *weights_of(fused)))
    with torch.no_grad():
        fused(x, out=out)
    assert seen == [{}, {"out": out}] and through == [fused, fused]
    hook.remove()
    hook = fused.register_forward_hook(lambda m, args, y: y + 1)
    torch.testing.assert_close(fused(x), want + 1)
    hook.remove()
    hook = nn.modules.module.register_module_forward_hook(lambda m, args, y: y * 0)
    assert not fused(x).any()
    hook.remove()

    class Scaled(mod.FusedMLP):  # a subclass's own forward is what its calls run
        def forward(self, x, *, out=None):
            return 3 * super().forward(x, out=out)

    scaled = Scaled()
    scaled.load_state_dict(fused.state_dict())
    torch.testing.assert_close(scaled(x), 3 * want)
    monkeypatch.setattr(lanes, "_TRACING", lambda: True)  # as under torch.jit.trace
    del through[:]
    torch.testing.assert_close(fused(x), want)
    assert through == [fused]

    monkeypatch.undo()
    fused.compile(backend="eager")
    torch.testing.assert_close(fused(x), want)
    assert fused._compiled_call_impl is not None


def test_parametrized_weights_and_functional_call(gelu_mod):
    """torch.func.functional_call and weight_norm-style parametrizations see the real weights."""
    fused = gelu_mod.FusedMLP()
    x = torch.randn(4, 20)
    zeros = {k: torch.zeros_like(v) for k, v in fused.named_parameters()}
    assert torch.equal(torch.func.functional_call(fused, zeros, (x,)), torch.zeros(4, 7))
    with torch.no_grad():
        want = fused(x)
    nn.utils.parametrizations.weight_norm(fused.linears[0])
    with torch.no_grad():
        torch.testing.assert_close(fused(x), want, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("act", ["relu", "gelu_tanh"])
def test_epilogue_path_is_dispatched_and_matches_the_reference(load_generated, act):
    """A bucket won by the cuBLASLt-epilogue strategy runs the module's `epilogue` (on the CPU
    torch's fallback computes the same layers); gelu (erf) has no exact epilogue, so its
    modules have none, and neither has a module whose table has no epilogue cell."""
    from mlpgen.emit import entry
    from mlpgen.spec import KernelConfig
    from mlpgen.verify import random_problem, reference

    spec = MLPSpec((24, 40, 33, 9), act=act, dtype="fp32")
    table = {1: entry(KernelConfig(strategy="epilogue"))}
    mod, _ = load_generated(spec, gpu_key="default", table=table)
    assert set(mod._TORCH_PATHS) == {"torch", "epilogue"}
    x, weights, biases = random_problem(spec, 13)
    calls = []
    real = mod.epilogue
    mod._TORCH_PATHS["epilogue"] = lambda *a: calls.append(1) or real(*a)
    y = mod.mlp(x, weights, biases)
    assert calls
    assert_matches(y, reference(spec, x, weights, biases), "fp32")
    gelu, _ = load_generated(MLPSpec((24, 40, 9), act="gelu"))
    assert set(gelu._TORCH_PATHS) == {"torch"} and not hasattr(gelu, "epilogue")
    unused, _ = load_generated(MLPSpec((24, 40, 9), act=act, dtype="fp32"))  # no epilogue cell
    assert set(unused._TORCH_PATHS) == {"torch"} and not hasattr(unused, "epilogue")


def test_cuda_graph_winner_is_rendered_and_chosen_for_capture(load_generated, tmp_path, capsys):
    """A cell with a CUDA-graph winner: its kernel is in the module, config_for(graph=True)
    returns it, and run privately (as under capture) it is correct and leaves the shared
    workspace alone: with the plan's own workspace (made before the capture, zero again after
    every launch), or with fresh buffers when the plan was made during the capture. (The
    capture itself is checked on the GPU.)"""
    from mlpgen.cli import main
    from mlpgen.emit import entry, with_graph_winner
    from mlpgen.spec import KernelConfig
    from mlpgen.verify import random_problem, reference

    spec = MLPSpec((40, 70, 9), act="gelu", dtype="fp32")
    calls = KernelConfig("stream", block_m=16, block_n=16, chunk=32, num_stages=3)
    graph = KernelConfig("split", block_m=16, chunk=16, block_n=16, block_k=16)
    cell = with_graph_winner(entry(calls, us=11.7, host_us=15.0), graph, 4.1)
    mod, path = load_generated(spec, gpu_key="Some GPU|sm90|132", table={1: cell})
    assert mod._GRAPH_CELLS and graph.kernel_name in mod.KERNELS
    assert mod.config_for(5, "Some GPU|sm90|132")["kernel"] == calls.kernel_name
    chosen = mod.config_for(5, "Some GPU|sm90|132", graph=True)
    assert chosen["kernel"] == graph.kernel_name and chosen["us"] == 4.1
    rt = lanes.ModuleRuntime(vars(mod))  # the plans of mlpgen.runtime, which GPU calls take
    rt.fast = False  # its launches by triton's public API (the interpreter's)
    plan = rt.plan(chosen, 37, random_problem(spec, 37)[0], shared_ws=False)
    acc, counts = plan.ws
    for _ in range(2):  # fresh inputs: the second launch is right only on a zeroed workspace
        x, weights, biases = random_problem(spec, 37)
        y = rt.execute(plan, x, weights, biases, private=True)
        assert_matches(y, reference(spec, x, weights, biases), "fp32")
        assert plan.ws[0] is acc and not acc.any() and not counts.any()
    in_capture = rt.plan(chosen, 37, x, shared_ws=False, capturing=True)
    assert in_capture.ws is None  # no allocation outside the graph's memory pool
    rows = lanes.OWN_WORKSPACE_MAX // (9 * 4) + 1  # one row over the size a plan may own
    assert rt.plan(chosen, rows, x, shared_ws=False).ws is None
    y = rt.execute(in_capture, x, weights, biases, private=True)
    assert_matches(y, reference(spec, x, weights, biases), "fp32")
    assert not rt.workspaces  # neither touched the shared workspace
    assert main(["show", str(path)]) == 0
    assert f"in a CUDA graph: {graph.kernel_name}  4.10 us GPU" in capsys.readouterr().out


def test_older_gpus_get_the_exact_activation_helpers(load_generated, monkeypatch):
    """tanh.approx.f32 needs sm_75, the packed fp16 helpers' min.f16x2 sm_80: the first sight of
    an older GPU (gpu_key, which every plan calls before compiling) swaps the module's _tanh
    (which _gelu and the tanh-family activations call) for _tanh_exact, and _silu_f16 for
    _silu_f16_exact; a newer GPU keeps them."""
    from types import SimpleNamespace

    mod, _ = load_generated(MLPSpec((16, 32, 8), act="silu", dtype="fp16"))
    swapped = {name for _, helpers in mod._SWAPS for name in helpers}
    assert swapped == {"_tanh", "_silu_f16", "_pdl_wait", "_pdl_release"}
    # stand-ins for the inline-asm helpers (the interpreter has the exact ones)
    approx, packed = object(), object()
    for (major, minor), tanh, silu in (
        ((9, 0), approx, packed),
        ((8, 0), approx, packed),
        ((7, 5), approx, mod._silu_f16_exact),
        ((7, 0), mod._tanh_exact, mod._silu_f16_exact),
    ):
        mod._GPU_KEYS.clear()
        mod._tanh, mod._silu_f16 = approx, packed
        props = SimpleNamespace(name="GPU", major=major, minor=minor, multi_processor_count=80)
        monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index, p=props: p)
        assert mod.gpu_key(torch.device("cuda", 0)) == f"GPU|sm{major}{minor}|80"
        assert mod._tanh is tanh and mod._silu_f16 is silu


def test_tma_kernels_get_an_allocator_only_where_none_is_set(load_generated):
    """stream's TMA descriptors need triton's allocator (a context variable, unset by default):
    _tma_ready sets the module's own where none is set, keeps a caller's, and refuses (leaving
    it alone) inputs whose base is not 16-byte aligned."""
    import contextvars

    from triton.runtime import _allocation

    from mlpgen.emit import entry
    from mlpgen.spec import KernelConfig

    tma = KernelConfig("stream", block_m=16, block_n=16, chunk=32, tma=True)
    spec = MLPSpec((40, 72, 24), act="gelu", dtype="fp16")
    mod, _ = load_generated(spec, gpu_key="GPU|sm90|132", table={1: entry(tma)})
    x = torch.zeros(8, 40, dtype=torch.float16)
    weights = [torch.zeros(72, 40, dtype=torch.float16), torch.zeros(24, 72, dtype=torch.float16)]

    def in_fresh_context(allocator, inputs):
        def run():
            _allocation._allocator.set(allocator)
            ready = mod._tma_ready(inputs, weights)
            return ready, _allocation._allocator.get()

        return contextvars.Context().run(run)

    assert in_fresh_context(_allocation._NULL_ALLOCATOR, x) == (True, mod._tma_scratch)
    mine = lambda size, alignment, stream: None  # noqa: E731
    assert in_fresh_context(mine, x) == (True, mine)
    shifted = torch.zeros(8 * 40 + 1, dtype=torch.float16)[1:].view(8, 40)
    null = _allocation._NULL_ALLOCATOR
    assert in_fresh_context(null, shifted) == (False, null)


@pytest.mark.interpret
def test_out_receives_the_result_without_a_new_tensor(gelu_mod, monkeypatch):
    """out=: the kernel writes y into the caller's tensor (leading dims too) and the call
    returns that tensor; nothing else is allocated for y."""
    fused = gelu_mod.FusedMLP()
    x = torch.randn(2, 21, 20)
    want = gelu_mod.reference(x.view(-1, 20), *weights_of(fused)).view(2, 21, 7)
    out = torch.full((2, 21, 7), float("nan"))
    second = out[1]
    outputs = []  # the y argument of every kernel launch
    real = gelu_mod._run

    def run(kernel, grid, args, *rest, **kw):
        outputs.append(args[1].data_ptr())
        return real(kernel, grid, args, *rest, **kw)

    monkeypatch.setattr(gelu_mod, "_run", run)
    with torch.no_grad():
        assert fused(x, out=out) is out
        torch.testing.assert_close(out, want, atol=1e-4, rtol=1e-4)
        second.fill_(float("nan"))
        assert gelu_mod.mlp(x[1], *weights_of(fused), out=second) is second
    assert outputs == [out.data_ptr(), second.data_ptr()]
    torch.testing.assert_close(out, want, atol=1e-4, rtol=1e-4)


def test_out_is_checked(gelu_mod, load_generated):
    """A wrong out= is refused with what it should be (an out overlapping the input too: the
    kernels read x while they write y); with a gradient needed it is refused like torch's out=
    arguments; under no_grad the parameters' requires_grad is no matter."""
    square_mod, _ = load_generated(MLPSpec((7, 9, 7), dtype="fp32"))
    fused = gelu_mod.FusedMLP()
    x = torch.randn(5, 20)
    with torch.no_grad():
        with pytest.raises(ValueError, match=r"a torch.float32 tensor of shape \[5, 7\]"):
            fused(x, out=torch.empty(5, 8))
        with pytest.raises(ValueError, match="of shape"):
            fused(x, out=torch.empty(5, 7, dtype=torch.float64))
        with pytest.raises(ValueError, match="contiguous"):
            fused(x, out=torch.empty(7, 5).t())
        with pytest.raises(TypeError, match="out must be a tensor"):
            fused(x, out=[0.0] * 35)
        square = torch.randn(5, 7)  # an out that is the input (or a view of its memory)
        with pytest.raises(ValueError, match="must not share memory with the input"):
            square_mod.FusedMLP()(square, out=square)
        with pytest.raises(ValueError, match="must not share memory with the input"):
            square_mod.FusedMLP()(square[:3], out=square[2:])
    out = torch.empty(5, 7)
    with pytest.raises(RuntimeError, match="does not support automatic differentiation"):
        fused(x, out=out)  # the parameters require grad
    with torch.no_grad():
        assert fused(x, out=out) is out
    torch.testing.assert_close(out, gelu_mod.reference(x, *weights_of(fused)), atol=1e-4, rtol=1e-4)
