"""The rendered rowblock kernel itself, run through Triton's interpreter against the fp32
reference. Small sizes: the interpreter runs every program in Python.

bf16 is checked on the GPU only: the interpreter's bf16 tl.dot returns garbage (seen with
triton 3.9: a 16x16 bf16 dot off by 1e10), while bf16 loads and stores are right."""

import dataclasses
import math

import pytest
import torch
import triton
import triton.language as tl

from mlpgen.activations import ACTIVATIONS
from mlpgen.emit import entry
from mlpgen.render import render_kernel
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import TOLERANCE, random_problem, reference, rel_error

pytestmark = pytest.mark.interpret
KEY = "test|sm0|0"


def run_configs(load_generated, spec, configs, m, with_module=False):
    """Launch each config on NaN-poisoned output; return the relative error of each."""
    table = {i + 1: entry(c) for i, c in enumerate(configs)}
    mod, _ = load_generated(spec, gpu_key=KEY, table=table)
    x, weights, biases = random_problem(spec, m)
    ref = reference(spec, x, weights, biases)
    errors = []
    for cell in table.values():
        out = torch.full((m, spec.widths[-1]), math.nan, dtype=x.dtype)
        mod._launch(x, weights, biases, cell, out=out)
        errors.append(rel_error(out, ref))
    return (errors, mod) if with_module else errors


@pytest.fixture(params=[True, False], ids=["prefetch", "in-place"])
def prefetch(request, monkeypatch):
    """Both load orders of rowblock: every weight tile before the first dot (layout.prefetches,
    where they fit in registers) and each where it is used."""
    from mlpgen import layout

    monkeypatch.setattr(layout, "PREFETCH_REGS", 1 << 30 if request.param else -1)
    return request.param


def assert_load_order(spec, config, prefetch):
    comment = render_kernel(spec, config).splitlines()[2]
    assert comment.endswith("prefetched") == prefetch, comment


CASES = [
    # widths, act, out_act, dtype, bias, M, configs as (block_m, chunk)
    ((37, 10), "relu", "none", "fp32", True, 1, [(16, 16), (32, 64)]),
    ((100, 37, 10), "gelu", "none", "fp16", True, 97, [(16, 32), (32, 64)]),
    ((64, 129, 33, 16), "silu", "none", "fp16", False, 50, [(16, 32)]),
    ((20, 30, 40, 30, 20, 5), "tanh", "sigmoid", "fp32", True, 33, [(16, 16)]),
    ((48, 80, 24), "leaky_relu", "relu", "fp32", False, 7, [(32, 32)]),
]


@pytest.mark.parametrize("widths, act, out_act, dtype, bias, m, cfgs", CASES)
def test_kernel_matches_reference(
    load_generated, prefetch, widths, act, out_act, dtype, bias, m, cfgs
):
    spec = MLPSpec(widths, act=act, out_act=out_act, dtype=dtype, bias=bias)
    configs = [KernelConfig(block_m=b, chunk=c) for b, c in cfgs]
    assert_load_order(spec, configs[0], prefetch)
    for err in run_configs(load_generated, spec, configs, m):
        assert err <= TOLERANCE[dtype]


PERSIST = [
    KernelConfig(strategy="persist", block_m=16, block_n=16, block_k=32),
    KernelConfig(strategy="persist", block_m=32, block_n=32, block_k=16),
    # the last layer in narrower tiles than the hidden ones (masked where 16 passes its width)
    KernelConfig(strategy="persist", block_m=16, block_n=32, block_k=32, last_block_n=16),
]


@pytest.mark.parametrize("widths, act, out_act, dtype, bias, m, cfgs", CASES)
def test_persist_kernel_matches_reference(
    load_generated, widths, act, out_act, dtype, bias, m, cfgs
):
    """The persist strategy under the interpreter runs one program (programs run one after
    another there, so a grid barrier with more would never open): this checks its tiling,
    masking and layer chaining; the GPU tests check the barrier with many programs."""
    spec = MLPSpec(widths, act=act, out_act=out_act, dtype=dtype, bias=bias)
    errors, mod = run_configs(load_generated, spec, PERSIST, m, with_module=True)
    for err in errors:
        assert err <= TOLERANCE[dtype]
    if spec.depth > 1:  # one program waits for no one: the barrier counter stays untouched
        [(rows, (*hidden, sync))] = mod._WORKSPACES.values()
        assert rows >= m and [h.shape[1] for h in hidden] == list(widths[1:-1])
        assert sync.tolist() == [0]


STREAM = [
    KernelConfig(strategy="stream", block_m=16, block_n=16, chunk=32),
    KernelConfig(strategy="stream", block_m=32, block_n=32, chunk=64),
]


STREAM_TMA = [
    KernelConfig(strategy="stream_tma", block_m=16, block_n=16, chunk=32, num_stages=2),
    KernelConfig(strategy="stream_tma", block_m=32, block_n=32, chunk=64, num_stages=2),
]


@pytest.mark.parametrize(
    "configs, widths, act, out_act, dtype, bias, m",
    [
        (STREAM, (100, 37, 10), "gelu", "none", "fp16", True, 97),
        (STREAM, (20, 30, 5), "tanh", "sigmoid", "fp32", False, 33),
        (STREAM, (37, 70, 130), "relu", "silu", "fp32", True, 1),
        # TMA: rows of 16-byte multiples, none a multiple of the tiles: partial boxes load
        # zeros past every edge and store only what is inside
        (STREAM_TMA, (40, 72, 24), "gelu", "none", "fp16", True, 97),
        (STREAM_TMA, (36, 20, 12), "sigmoid", "tanh", "fp32", False, 33),
        (STREAM_TMA, (8, 136, 200), "relu", "silu", "fp32", True, 1),
    ],
    ids=["stream"] * 3 + ["stream_tma"] * 3,
)
def test_stream_kernels_match_reference(
    load_generated, configs, widths, act, out_act, dtype, bias, m
):
    spec = MLPSpec(widths, act=act, out_act=out_act, dtype=dtype, bias=bias)
    for err in run_configs(load_generated, spec, configs, m):
        assert err <= TOLERANCE[dtype]


def test_stream_tma_takes_the_torch_path_for_a_misaligned_input(load_generated):
    """TMA needs 16-byte aligned bases: a view one element into its storage runs the torch
    path instead (the kernel would fault on a GPU), an aligned one the kernel."""
    spec = MLPSpec((40, 72, 24), act="gelu", dtype="fp16")
    cell = entry(STREAM_TMA[0])
    mod, _ = load_generated(spec, gpu_key=KEY, table={1: cell})
    x, weights, biases = random_problem(spec, 21)
    launched = []
    real = mod._run
    mod._run = lambda kernel, *args, **kw: launched.append(kernel) or real(kernel, *args, **kw)
    shifted = torch.empty(21 * 40 + 1, dtype=x.dtype)[1:].view(21, 40).copy_(x)
    assert shifted.data_ptr() % 16 and torch.equal(shifted, x)
    ref = reference(spec, x, weights, biases)
    for inp, runs in ((shifted, 0), (x, 1)):
        assert rel_error(mod._launch(inp, weights, biases, cell), ref) <= TOLERANCE["fp16"]
        assert len(launched) == runs


SPLIT = [
    KernelConfig(strategy="split", block_m=16, chunk=16, block_n=16, block_k=32),
    KernelConfig(strategy="split", block_m=32, chunk=32, block_n=32, block_k=16),
]


@pytest.mark.parametrize(
    "widths, act, out_act, dtype, bias, m",
    [
        ((100, 37, 10), "gelu", "none", "fp16", True, 97),
        ((20, 30, 5), "tanh", "sigmoid", "fp32", False, 33),
        ((37, 70, 130), "relu", "silu", "fp32", True, 1),
    ],
)
def test_split_kernel_matches_reference(load_generated, widths, act, out_act, dtype, bias, m):
    """Several row blocks and hidden chunks (M not a multiple of block_m, odd widths), each
    config launched twice: the second launch is right only if the first left its workspace
    rows and arrival counters zero again."""
    spec = MLPSpec(widths, act=act, out_act=out_act, dtype=dtype, bias=bias)
    for _ in range(2):
        errors, mod = run_configs(load_generated, spec, SPLIT, m, with_module=True)
        assert all(err <= TOLERANCE[dtype] for err in errors), errors
    [(rows, (acc, counts))] = mod._WORKSPACES.values()
    assert rows >= m and acc.shape == (rows, widths[-1]) and acc.dtype == torch.float32
    assert not acc.any() and not counts.any()


LAYERED = [
    KernelConfig(strategy="layered", block_m=16, block_n=16, block_k=16),
    KernelConfig(strategy="layered", block_m=32, block_n=64, block_k=32),
]


CHAIN = [
    KernelConfig(strategy="chain", block_m=16, block_n=16, block_k=16),
    KernelConfig(strategy="chain", block_m=32, block_n=64, block_k=32),
]


@pytest.mark.parametrize("configs", [LAYERED, CHAIN], ids=["layered", "chain"])
@pytest.mark.parametrize(
    "widths, act, out_act, dtype, bias, m",
    [
        # 11 row tiles of 16 at M=161: a full group of 8 and a partial one
        ((100, 37, 10), "gelu", "none", "fp16", True, 161),
        ((20, 30, 40, 30, 5), "tanh", "sigmoid", "fp32", False, 33),
        ((37, 70, 130), "relu", "silu", "fp32", True, 1),
    ],
)
def test_layered_and_chain_kernels_match_reference(
    load_generated, configs, widths, act, out_act, dtype, bias, m
):
    """One fused GEMM per hidden layer (odd widths: masked k and n tiles; M not a multiple of
    block_m; grouped program order with a partial group), the last layer by torch (layered)
    or by a kernel too, with its output activation (chain; the interpreter has no PDL, so the
    chain kernels' wait and release are the module's no-ops)."""
    spec = MLPSpec(widths, act=act, out_act=out_act, dtype=dtype, bias=bias)
    errors = run_configs(load_generated, spec, configs, m)
    assert all(err <= TOLERANCE[dtype] for err in errors), errors


def test_chain_kernels_wait_for_their_input_and_release_the_next(load_generated, monkeypatch):
    """Every chain kernel waits for the previous one, then lets the next one launch, before its
    loads (releasing first took 1.60x the GPU time on the H200, run192); the module launches
    them in order, the later ones with PDL where it is on (forced on here; the interpreter
    ignores it), the first where the cell says "pdl"."""
    spec = MLPSpec((24, 40, 48, 8), act="gelu", dtype="fp32")
    cfg = CHAIN[0]
    assert cfg.kernel_name == "_k_chain_m16_n16_k16"
    src = render_kernel(spec, cfg)
    kernels = src.split("@triton.jit")[1:]
    assert len(kernels) == 3
    for text in kernels:
        assert "_pdl_enter()" not in text
        assert text.count("_pdl_wait()") == text.count("_pdl_release()") == 1
        assert text.index("_pdl_wait()") < text.index("_pdl_release()") < text.index("tl.load(")
    mod, _ = load_generated(spec, gpu_key=KEY, table={1: entry(cfg)})
    mod.TUNED["default"] = {1: entry(cfg)}  # the interpreter runs the default table
    mod._forget_dispatch()
    assert mod._pdl_wait is mod._pdl_off and mod._PDL == [False]
    monkeypatch.setattr(mod, "_PDL", [True])
    launched = []
    real = mod._run
    monkeypatch.setattr(
        mod,
        "_run",
        lambda kernel, *a: launched.append((kernel.fn.__name__, a[-1])) or real(*(kernel, *a[:-1])),
    )
    x, weights, biases = random_problem(spec, 21)
    name = cfg.kernel_name
    for linked in (False, True):
        mod.TUNED["default"] = {1: entry(dataclasses.replace(cfg, pdl=linked))}
        mod._forget_dispatch()
        launched.clear()
        y = mod.mlp(x, weights, biases)
        assert launched == [(f"{name}_l0", linked), (f"{name}_l1", True), (f"{name}_l2", True)]
        assert rel_error(y, reference(spec, x, weights, biases)) <= TOLERANCE["fp32"]


_GELU = None


@triton.jit
def _apply_gelu(x_ptr, y_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(y_ptr + i, _GELU(tl.load(x_ptr + i)))


def test_gelu_kernels_use_the_tanh_fit(load_generated):
    """Every kernel takes GELU from the module's _gelu (erf through a tanh fit), the layered
    and stream kernels too (odd widths, M not a multiple of block_m), fp16 kernels through the
    packed _gelu_f16 (its exact form here); the fit itself, with the interpreter's exact tanh,
    is within 4.2e-5 * |x| / 2 of torch's exact GELU over [-12, 12]."""
    global _GELU
    spec = MLPSpec((37, 70, 50, 9), act="gelu", dtype="fp32")
    cfg = KernelConfig("layered", block_m=16, block_n=32, block_k=16)
    src = render_kernel(spec, cfg)
    assert src.count("(_gelu(acc)).to(tl.float32)") == 2 and "erf" not in src
    errors, mod = run_configs(load_generated, spec, [cfg], 45, with_module=True)
    assert errors[0] <= 1e-4, errors  # fp32 through the interpreter: the fit's error, no tf32
    stream_spec = MLPSpec((37, 70, 9), act="gelu", dtype="fp32")
    stream = KernelConfig("stream", block_m=16, block_n=32, chunk=32, num_stages=3)
    assert "h = (_gelu(s)).to(tl.float32)" in render_kernel(stream_spec, stream)
    assert run_configs(load_generated, stream_spec, [stream], 45)[0] <= 1e-4
    half = MLPSpec((37, 70, 9), act="gelu", dtype="fp16")
    assert "h = _gelu_f16(s)" in render_kernel(half, stream)
    assert run_configs(load_generated, half, [stream], 45)[0] <= TOLERANCE["fp16"]
    _GELU = mod._gelu  # what _apply_gelu calls (the interpreter reads globals)
    x = torch.linspace(-12, 12, 4096)
    y = torch.empty_like(x)
    _apply_gelu[(1,)](x, y, 4096)
    x = x.double()
    err = (y.double() - torch.nn.functional.gelu(x)).abs()
    assert (err <= 0.5 * x.abs() * 4.2e-5 + 1e-6).all()
    assert err.max() > 1e-6  # the fit, not an exact erf


def test_layered_module_runs_one_kernel_per_hidden_layer(load_generated, monkeypatch):
    """The module's plan path (mlp()) launches each hidden layer's kernel once, in order."""
    spec = MLPSpec((24, 40, 48, 8), act="gelu", dtype="fp32")
    mod, _ = load_generated(spec, gpu_key=KEY, table={1: entry(LAYERED[0])})
    mod.TUNED["default"] = {1: entry(LAYERED[0])}  # the interpreter runs the default table
    mod._forget_dispatch()
    launched = []
    real = mod._run
    monkeypatch.setattr(
        mod, "_run", lambda kernel, *a: launched.append(kernel.fn.__name__) or real(kernel, *a)
    )
    x, weights, biases = random_problem(spec, 21)
    y = mod.mlp(x, weights, biases)
    assert launched == ["_k_layered_m16_n16_k16_l0", "_k_layered_m16_n16_k16_l1"]
    assert rel_error(y, reference(spec, x, weights, biases)) <= TOLERANCE["fp32"]


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_every_activation(load_generated, dtype):
    for act in ACTIVATIONS:
        spec = MLPSpec((3, 5, 2), act=act, out_act=act, dtype=dtype)
        [err] = run_configs(load_generated, spec, [KernelConfig(block_m=16, chunk=16)], 11)
        assert err <= TOLERANCE[dtype], act


def test_poisoned_rows_past_m_are_untouched(load_generated):
    """Rows beyond M belong to nobody: the kernel must mask its stores there."""
    spec = MLPSpec((24, 40, 9), act="relu", dtype="fp32")
    mod, _ = load_generated(spec, gpu_key=KEY, table={1: entry(KernelConfig(block_m=32, chunk=16))})
    x, weights, biases = random_problem(spec, 13)
    out = torch.full((20, 9), math.nan)
    mod._launch(x, weights, biases, mod.TUNED[KEY][1], out=out[:13])
    assert torch.isnan(out[13:]).all()
    assert rel_error(out[:13], reference(spec, x, weights, biases)) <= TOLERANCE["fp32"]


def test_module_entry_points_use_the_kernel(load_generated):
    spec = MLPSpec((100, 37, 10), act="gelu", dtype="fp16")
    mod, _ = load_generated(spec)
    assert mod._INTERPRET
    x, weights, biases = random_problem(spec, 3 * 7 * 5)
    calls = []
    real = mod._run
    mod._run = lambda *a, **k: calls.append(1) or real(*a, **k)
    y = mod.mlp(x.reshape(3, 35, 100), weights, biases)  # leading batch dims
    assert calls and y.shape == (3, 35, 10)
    assert rel_error(y.reshape(-1, 10), reference(spec, x, weights, biases)) <= TOLERANCE["fp16"]
    xt = x[:, :100].t().contiguous().t()  # non-contiguous view with the same values
    assert not xt.is_contiguous()
    assert torch.equal(mod.mlp(xt, weights, biases), mod.mlp(x, weights, biases))


def test_reference_agrees_with_verify_reference(load_generated):
    spec = MLPSpec((6, 7, 3), act="gelu_tanh", out_act="tanh", dtype="fp32", bias=False)
    mod, _ = load_generated(spec)
    x, weights, biases = random_problem(spec, 5)
    torch.testing.assert_close(mod.reference(x, weights, biases), reference(spec, x, weights))
    assert ACTIVATIONS["gelu_tanh"].torch_fn(torch.ones(1)).item() == pytest.approx(0.8412, 1e-3)


def test_a_cluster_cell_runs_the_default_where_clusters_cannot_run(load_generated):
    """The cluster kernel's PTX (thread-block clusters, distributed shared memory) and its launch
    (shared memory past triton's own) need an sm_90 GPU and mlpgen.runtime; in the interpreter
    (and on CPU tensors, older GPUs, the public launch path) a cluster cell's rows run the
    heuristic default's cell, or the torch path where that is a cluster cell too: right,
    through FusedMLP and mlp(). (tests/test_gpu_kernels.py runs the kernel on the GPU.)"""
    spec = MLPSpec((100, 250, 70), act="silu", dtype="fp32")
    cfg = KernelConfig("cluster", block_m=16, chunk=64, block_k=128, num_warps=4)
    cell = entry(cfg)
    mod, _ = load_generated(spec, gpu_key=KEY, table={1: cell})  # its kernel is in the module
    x, weights, biases = random_problem(spec, 19, device="cpu")
    want = reference(spec, x, weights, biases)
    assert mod._RT is None and not mod._RUNNABLE["cluster"](x)
    plan = mod._Plan(cell, 19, x)
    assert plan.cfg is mod.pick_cell(mod.TUNED["default"], 19) and plan.strategy != "cluster"
    assert rel_error(mod._launch(x, weights, biases, cell), want) <= TOLERANCE["fp32"]
    mod.TUNED["default"] = {1: cell}  # the interpreter runs the default table
    mod._forget_dispatch()
    plan = mod._Plan(mod.config_for(19, "default"), 19, x)
    assert plan.cfg == {"strategy": "torch"} and plan.torch_path is mod.reference
    assert plan.kernel is None
    params = [p for pair in zip(weights, biases) for p in pair]
    assert rel_error(mod.mlp(x, weights, biases), want) <= TOLERANCE["fp32"]
    fused = mod.FusedMLP()
    with torch.no_grad():
        for p, q in zip(fused.parameters(), params):
            p.copy_(q)
        assert rel_error(fused(x), want) <= TOLERANCE["fp32"]


def test_persist_grid_counts_each_layers_tiles(load_generated, monkeypatch):
    """persist's grid on a GPU: up to one program per SM, as many as the layer with the most
    tiles has, the last layer counted in its own tile width (last_block_n)."""
    spec = MLPSpec((256, 64, 256))  # a narrow hidden layer: the last one has the most tiles
    plain = KernelConfig(strategy="persist", block_m=64, block_n=64, num_stages=3)
    narrow = KernelConfig(strategy="persist", block_m=64, block_n=64, num_stages=3, last_block_n=16)
    table = {1: entry(plain), 2: entry(narrow)}
    mod, _ = load_generated(spec, gpu_key=KEY, table=table)
    monkeypatch.setattr(mod, "_INTERPRET", False)  # as on a GPU of 132 SMs
    monkeypatch.setattr(mod, "_sm_count", lambda x: 132)
    x = torch.zeros(1, 256)
    assert mod._grid_persist(table[1], 256, x) == (4 * 4, 1)  # 4 row blocks x 4 last tiles
    assert mod._grid_persist(table[2], 256, x) == (4 * 16, 1)  # 16 last tiles of 16 columns
    assert mod._grid_persist(table[2], 1024, x) == (132, 1)  # 256 tiles: one program per SM
