"""The generated module on a real GPU: correct in every dtype at small, odd and large M."""

import math
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl
from conftest import SHIPPED, assert_matches

from mlpgen.emit import entry, graph_cell
from mlpgen.selfcheck import load_module
from mlpgen.space import heuristic_config, infeasible_reason
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import TOLERANCE, random_problem, reference, rel_error

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("m", [1, 1000, 65536])
def test_headline_spec_default_config(load_generated, dtype, m):
    spec = MLPSpec((256, 512, 256), act="gelu", dtype=dtype)
    mod, _ = load_generated(spec)
    x, weights, biases = random_problem(spec, m, device="cuda")
    y = mod.mlp(x, weights, biases)  # the default table: this GPU is not tuned in a fresh module
    assert_matches(y, reference(spec, x, weights, biases), dtype)


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_odd_depth4_spec_every_bucket_config(load_generated, dtype):
    spec = MLPSpec((100, 300, 200, 7), act="silu", dtype=dtype)
    mod, _ = load_generated(spec)
    for m in (1, 37, 1000, 4099):
        x, weights, biases = random_problem(spec, m, device="cuda")
        cfg = heuristic_config(spec, m)
        if cfg.strategy == "torch":  # the default over 2048 rows for widths over 128
            assert m > 2048
            y = mod.mlp(x, weights, biases)  # a fresh module: the default table
            assert_matches(y, reference(spec, x, weights, biases), dtype, m)
            cfg = heuristic_config(spec, 2048)  # the fused default still runs an odd large M
        cell = entry(cfg)
        out = torch.full((m, 7), math.nan, device="cuda", dtype=x.dtype)
        mod._launch(x, weights, biases, cell, out=out)
        assert_matches(out, reference(spec, x, weights, biases), dtype, m)


PERSIST = [
    KernelConfig(strategy="persist", block_m=16, block_n=16, block_k=64, num_stages=3),
    KernelConfig(strategy="persist", block_m=64, block_n=64, block_k=64, num_warps=4),
    KernelConfig(strategy="persist", block_m=128, block_n=128, block_k=64, num_warps=8),
    # the last layer in narrower tiles: more tiles than the hidden layers' there (the grid)
    KernelConfig(
        strategy="persist", block_m=64, block_n=64, block_k=64, num_stages=4, last_block_n=32
    ),
]


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize(
    "widths, act", [((256, 512, 256), "gelu"), ((100, 300, 200, 7), "silu"), ((64, 96, 3), "relu")]
)
def test_persist_many_programs(load_generated, widths, act, dtype):
    """The grid barrier with up to one program per SM, launched again and again on one
    workspace: every launch correct; after each, the counter's low bits are zero again and its
    top bit has flipped once per barrier (_grid_sync)."""
    spec = MLPSpec(widths, act=act, dtype=dtype)
    table = {i: entry(c) for i, c in enumerate(PERSIST, 1)}
    mod, _ = load_generated(spec, gpu_key="test", table=table)
    flip = (spec.depth - 1) % 2 * -(2**31)  # what the barriers do to the top bit (int32)
    last = None  # (the counter, its value after the previous launch)
    for m in (1, 37, 1000, 4099, 20000):
        x, weights, biases = random_problem(spec, m, device="cuda")
        ref = reference(spec, x, weights, biases)
        *_, sync = ws = mod._WORKSPACE_BUFFERS["persist"](x, m)
        for cell in table.values():
            for _ in range(3):
                out = torch.full((m, widths[-1]), math.nan, device="cuda", dtype=x.dtype)
                mod._launch(x, weights, biases, cell, out=out, ws=ws)
                assert_matches(out, ref, dtype, (m, cell["kernel"]))
                [count] = sync.tolist()
                assert count & 0x7FFFFFFF == 0, (m, cell["kernel"], count)
                if last is not None and last[0] is sync:  # not the first launch on this one
                    assert count == last[1] ^ flip, (m, cell["kernel"], count)
                last = (sync, count)


def test_persist_wide_layers(load_generated):
    spec = MLPSpec((1024, 4096, 1024), act="gelu_tanh", dtype="bf16")
    mod, _ = load_generated(spec, gpu_key="test", table={1: entry(PERSIST[2])})
    x, weights, biases = random_problem(spec, 3000, device="cuda")
    out = mod._launch(x, weights, biases, mod.TUNED["test"][1])
    assert_matches(out, reference(spec, x, weights, biases), "bf16")


def test_fast_launch_path_is_used_and_correct(load_generated):
    """After the first call the compiled binary is launched directly (no JIT dispatcher)."""
    spec = MLPSpec((256, 512, 256), act="gelu")
    mod, _ = load_generated(spec)
    x, weights, biases = random_problem(spec, 64, device="cuda")
    first = mod.mlp(x, weights, biases)
    assert mod._RT is not None and mod._RT.fast and mod._RT.compiled
    x2, _, _ = random_problem(spec, 64, device="cuda")
    second = mod.mlp(x2, weights, biases)
    assert_matches(second, reference(spec, x2, weights, biases), "fp16")
    assert not torch.equal(first, second)


H200 = "NVIDIA H200|sm90|132"


@pytest.mark.parametrize("bucket", [4096, 16384, 262144])
def test_large_batch_winners_use_hopper_tensor_cores(bucket):
    """The shipped headline module's H200 winners for large buckets (call and CUDA-graph
    configs) compile to Hopper's warpgroup MMA (wgmma.mma_async in the PTX, not mma.sync) and
    spill no registers, and compute the right result."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("wgmma is sm_90's")
    mod = load_module(Path(__file__).resolve().parents[1] / "tuned/mlp_256x512x256_gelu_fp16.py")
    spec = MLPSpec.from_dict(mod.SPEC)
    cell = mod.TUNED[H200][bucket]
    cells = [cell] + [graph_cell(cell)] * ("graph" in cell)
    x, weights, biases = random_problem(spec, 1000, device="cuda")
    for c in cells:
        mod._RT.compiled.clear()
        mod._RT.direct.clear()
        err = rel_error(mod._launch(x, weights, biases, c), reference(spec, x, weights, biases))
        assert err <= TOLERANCE["fp16"], (c["kernel"], err)
        assert mod._RT.compiled, c["kernel"]
        for compiled in mod._RT.compiled.values():
            compiled = getattr(compiled, "compiled", compiled)  # a PDL launch's: lanes.Linked
            ptx = compiled.asm["ptx"]
            assert "wgmma.mma_async" in ptx and "mma.sync" not in ptx, c["kernel"]
            assert compiled.n_spills == 0, c["kernel"]


SPLIT = [
    KernelConfig(strategy="split", block_m=16, chunk=32, block_n=256, block_k=128),
    KernelConfig(strategy="split", block_m=16, chunk=64, block_n=128, block_k=128),
    KernelConfig(strategy="split", block_m=32, chunk=128, block_n=128, block_k=128),
    # failed intermittently before the barrier between the workspace's reads and its zeroing
    KernelConfig(strategy="split", block_m=16, chunk=64, block_n=128, block_k=128, num_warps=8),
]


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize(
    "widths, act",
    [((256, 512, 256), "gelu"), ((100, 300, 7), "silu"), ((1024, 4096, 1024), "gelu_tanh")],
)
def test_split_many_programs(load_generated, widths, act, dtype):
    """The atomic reduction with many programs per row block, on fresh inputs each launch
    (a program that read the workspace before every other one had added into it, or a
    workspace left dirty, makes a later launch wrong): every launch correct, the workspace and
    counters zero after each size."""
    spec = MLPSpec(widths, act=act, dtype=dtype)
    table = {i: entry(c) for i, c in enumerate(SPLIT, 1)}
    mod, _ = load_generated(spec, gpu_key="test", table=table)
    for m in (1, 37, 1000, 4099):
        acc, counts = ws = mod._WORKSPACE_BUFFERS["split"](torch.empty(0, device="cuda"), m)
        for cell in table.values():
            for _ in range(4):
                x, weights, biases = random_problem(spec, m, device="cuda")
                out = torch.full((m, widths[-1]), math.nan, device="cuda", dtype=x.dtype)
                mod._launch(x, weights, biases, cell, out=out, ws=ws)
                err = rel_error(out, reference(spec, x, weights, biases))
                assert err <= TOLERANCE[dtype], (m, cell["kernel"], err)
        assert not acc.any() and not counts.any()


CLUSTER = [
    KernelConfig(strategy="cluster", block_m=16, chunk=32, block_k=128, num_warps=4),
    KernelConfig(strategy="cluster", block_m=16, chunk=64, block_k=128, num_warps=2),
    # 32 rows; 64 rows, whose receive buffer (64 KiB for the headline) takes an opted-in launch
    KernelConfig(strategy="cluster", block_m=32, chunk=64, block_k=128, num_warps=4),
    KernelConfig(strategy="cluster", block_m=64, chunk=64, block_k=128, num_warps=8),
    # tiles of 1-8 rows, row by row on the CUDA cores (ClusterPlan.fma); k steps of 128 and 256
    KernelConfig(strategy="cluster", block_m=1, chunk=32, block_k=256, num_warps=4),
    KernelConfig(strategy="cluster", block_m=2, chunk=64, block_k=128, num_warps=4),
    KernelConfig(strategy="cluster", block_m=4, chunk=32, block_k=128, num_warps=4),
    KernelConfig(strategy="cluster", block_m=8, chunk=32, block_k=256, num_warps=4),
    # one row with 8 and 16 warps: the reduced axes span more warps' lanes
    KernelConfig(strategy="cluster", block_m=1, chunk=64, block_k=128, num_warps=8),
    KernelConfig(strategy="cluster", block_m=1, chunk=32, block_k=128, num_warps=16),
]


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize(
    "widths, act, bias",
    [
        ((256, 512, 256), "gelu", True),
        ((100, 250, 70), "silu", True),
        ((33, 64, 17), "relu", False),
    ],
)
def test_cluster_kernels(load_generated, widths, act, bias, dtype):
    """The hand-over through distributed shared memory on Hopper: clusters of 2-16 CTAs, four
    values a remote store where the layout gives them adjacent (else pairs, else one), tiles of
    32 and 64 rows (a 64 KiB receive buffer: an opted-in launch), tiles of 1-8 rows on the CUDA
    cores (one value a store: one a thread crashed with pairs; one row with 2-16 warps), masked
    rows and odd widths; every launch on fresh inputs right at 1, 2, 17 and 300 rows (a partial
    row block, many clusters), rows past M of a NaN-poisoned output untouched; launched as
    clusters (the compiled kernel's metadata: CTAs a cluster, triton's shared memory plus the
    buffer); and replayed from a CUDA graph on new inputs."""
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters need an sm_90 GPU")
    from mlpgen.strategies.cluster import plan_cluster

    spec = MLPSpec(widths, act=act, dtype=dtype, bias=bias)
    smem = torch.cuda.get_device_properties(0).shared_memory_per_block_optin
    tiles = [c for c in CLUSTER if infeasible_reason(spec, c, smem) is None]
    # 64 hidden: no 64-wide chunk (one CTA); 512: the 2-row 64-wide tile over its registers; in
    # fp32 two more of the 2-8-row tiles over theirs (a widened tile held for every row)
    over = 2 if dtype == "fp32" and widths[1] != 64 else 0
    assert len(tiles) == {512: 9, 250: 10, 64: 5}[widths[1]] - over
    table = {i: entry(c) for i, c in enumerate(tiles, 1)}
    mod, _ = load_generated(spec, gpu_key="test", table=table)
    for m in (1, 2, 17, 300):
        for cell in table.values():
            for _ in range(3):
                x, weights, biases = random_problem(spec, m, device="cuda")
                buf = torch.full((m + 3, widths[-1]), math.nan, device="cuda", dtype=x.dtype)
                mod._launch(x, weights, biases, cell, out=buf[:m])
                assert torch.isnan(buf[m:]).all(), (m, cell["kernel"])
                err = rel_error(buf[:m], reference(spec, x, weights, biases))
                assert err <= TOLERANCE[dtype], (m, cell["kernel"], err)
    for c in tiles:
        plan = plan_cluster(spec, c)
        kernel = mod.KERNELS[c.kernel_name]
        [compiled] = [v for k, v in mod._RT.compiled.items() if k[0] == kernel]
        warps, ctas, shared = compiled.packed_metadata
        assert (warps, ctas) == (c.num_warps, plan.ctas)
        assert shared == (compiled.metadata.shared + 15) // 16 * 16 + plan.buffer_bytes
        assert plan.buffer_bytes == plan.ctas * c.block_m * plan.bn * 4
    x, weights, biases = random_problem(spec, 5, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = mod._launch(x, weights, biases, table[1])
    for _ in range(3):
        fresh, _, _ = random_problem(spec, 5, device="cuda")
        x.copy_(fresh)
        graph.replay()
        assert_matches(y, reference(spec, x, weights, biases), dtype)


STREAM_TMA = [
    KernelConfig("stream", block_m=128, block_n=64, chunk=64, num_warps=8, num_stages=2, tma=True),
    KernelConfig("stream", block_m=128, block_n=32, chunk=128, num_warps=8, num_stages=2, tma=True),
]


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("widths, act", [((256, 512, 256), "gelu"), ((40, 72, 24), "silu")])
def test_stream_tma_kernels(load_generated, widths, act, dtype):
    """TMA loads and stores with partial boxes at every edge (M not a multiple of the rows,
    widths not of the tiles) on a persistent grid (more row blocks than SMs at 70000 rows),
    through a CUDA graph too (its descriptor scratch allocated in the capture); a misaligned
    input view runs the torch path instead of faulting."""
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("TMA is sm_90's")
    spec = MLPSpec(widths, act=act, dtype=dtype)
    smem = torch.cuda.get_device_properties(0).shared_memory_per_block_optin
    tiles = [c for c in STREAM_TMA if infeasible_reason(spec, c, smem) is None]
    assert tiles or dtype == "fp32"  # fp32's 256-wide tiles: over the shared memory
    table = {i: entry(c) for i, c in enumerate(tiles, 1)}
    mod, _ = load_generated(spec, gpu_key="test", table=table)
    for m in (1, 37, 1000, 70000):
        x, weights, biases = random_problem(spec, m, device="cuda")
        ref = reference(spec, x, weights, biases)
        for cell in table.values():
            out = torch.full((m, widths[-1]), math.nan, device="cuda", dtype=x.dtype)
            mod._launch(x, weights, biases, cell, out=out)
            assert_matches(out, ref, dtype, (m, cell["kernel"]))
    for cell in table.values():
        x, weights, biases = random_problem(spec, 1000, device="cuda")
        mod._launch(x, weights, biases, cell)  # compiled before the capture
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y = mod._launch(x, weights, biases, cell)
        x.copy_(random_problem(spec, 1000, device="cuda")[0])
        graph.replay()
        assert_matches(y, reference(spec, x, weights, biases), dtype)
        shifted = torch.empty(1000 * widths[0] + 1, device="cuda", dtype=x.dtype)[1:]
        shifted = shifted.view(1000, widths[0]).copy_(x)
        ref = reference(spec, shifted, weights, biases)
        assert_matches(mod._launch(shifted, weights, biases, cell), ref, dtype)


_GELU = _TANH = None  # set to a generated module's helpers before the launch


@triton.jit
def _apply_activations(x_ptr, gelu_ptr, tanh_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(x_ptr + i)
    tl.store(gelu_ptr + i, _GELU(x))
    tl.store(tanh_ptr + i, _TANH(x))


def test_activation_helpers_on_the_gpu(load_generated):
    """The generated module's _tanh (tanh.approx.f32, which the interpreter cannot run) and
    _gelu (erf through it) against torch's exact functions, elementwise over [-12, 12]."""
    global _GELU, _TANH
    mod, _ = load_generated(MLPSpec((64, 64, 64), act="gelu"), gpu_key="test", table={})
    _GELU, _TANH = mod._gelu, mod._tanh  # what _apply_activations calls
    x = torch.linspace(-12, 12, 8192, device="cuda")
    gelu, tanh = torch.empty_like(x), torch.empty_like(x)
    _apply_activations[(1,)](x, gelu, tanh, 8192)
    x = x.double()
    exact_tanh = torch.tanh(x)
    assert ((tanh - exact_tanh).abs() <= 2**-10.9 * exact_tanh.abs() + 1e-6).all()
    # the erf fit (4.1e-5) and tanh.approx's relative error, scaled by x / 2
    bound = 0.5 * x.abs() * (4.2e-5 + 2**-10.9) + 1e-6
    assert ((gelu - torch.nn.functional.gelu(x)).abs() <= bound).all()


@triton.jit
def _apply(x_ptr, y_ptr, N: tl.constexpr, FN: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(y_ptr + i, FN(tl.load(x_ptr + i)))


@pytest.mark.parametrize("act", ["gelu", "gelu_tanh", "silu", "sigmoid", "tanh"])
def test_packed_fp16_activations_on_the_gpu(load_generated, act):
    """The fp16 modules' f16x2 PTX helpers (which the interpreter cannot run) against torch's
    exact function of the fp16-rounded input, elementwise over [-12, 12]: within a few fp16
    rounding steps of the larger of the output and x / 2 (the terms GELU and SiLU add)."""
    from mlpgen.activations import ACTIVATIONS

    mod, _ = load_generated(MLPSpec((64, 64, 64), act=act, dtype="fp16"), gpu_key="t", table={})
    x = torch.linspace(-12, 12, 8192, device="cuda")
    y = torch.empty_like(x, dtype=torch.float16)
    _apply[(1,)](x, y, 8192, getattr(mod, f"_{act}_f16"))
    x = x.half().double()
    exact = ACTIVATIONS[act].torch_fn(x)
    bound = 2**-8 * torch.maximum(exact.abs(), 0.5 * x.abs()) + 2**-11
    assert ((y.double() - exact).abs() <= bound).all()


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_winners_for_this_gpu_are_correct(path):
    """Every config a shipped module dispatches to on this GPU (its call and CUDA-graph
    winners) against the fp32 reference, on fresh inputs at 37 rows and at the bucket's rows
    (capped at 4099: past that only the grid grows) -- bf16 ones included, which
    the interpreter cannot check (tests/test_shipped.py)."""
    mod = load_module(path)
    spec = MLPSpec.from_dict(mod.SPEC)
    table = mod.TUNED.get(mod.gpu_key())
    if table is None:
        pytest.skip(f"{path.stem} is not tuned for this GPU")
    for bucket, cell in table.items():
        for c in [cell] + [graph_cell(cell)] * ("graph" in cell):
            for m in sorted({37, min(bucket, 4099)}):
                x, w, b = random_problem(spec, m, device="cuda")
                err = rel_error(mod._launch(x, w, b, c), reference(spec, x, w, b))
                assert err <= TOLERANCE[spec.dtype], (bucket, c["strategy"], c.get("kernel"), m)


LINKED = [
    KernelConfig(strategy="cluster", block_m=1, chunk=32, block_k=128, num_warps=4, pdl=True),
    KernelConfig(strategy="cluster", block_m=16, chunk=32, block_k=128, num_warps=4, pdl=True),
    KernelConfig(strategy="rowblock", block_m=16, chunk=64, pdl=True),
    KernelConfig(strategy="split", block_m=16, chunk=64, block_n=128, block_k=128, pdl=True),
    KernelConfig(strategy="stream", block_m=64, block_n=64, chunk=64, pdl=True),
    KernelConfig(strategy="persist", block_m=64, block_n=64, block_k=64, num_stages=3, pdl=True),
]


def same(a, b, cell):
    """Equal bit for bit; split's atomics sum in no fixed order, so within rounding there."""
    if cell["strategy"] == "split":
        assert rel_error(a, b) <= 1e-2, cell["kernel"]
    else:
        assert torch.equal(a, b), cell["kernel"]


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_calls_linked_by_pdl(load_generated, dtype):
    """Cells with "pdl": the call's first kernel launched with PDL (launch_pdl on Hopper, the
    binary of its plain launch), so the next call's kernel starts while this one runs and
    waits in-kernel: 20 calls chained (each one's output the next one's input, in = out = 128
    columns) give the same outputs bit for bit as the same cells launched plainly, back to
    back on the stream and in a CUDA graph; a kernel that read its input before the previous
    call finished would differ. M not a multiple of any tile (cluster needs a power of two of
    CTAs: 256 / 32)."""
    spec = MLPSpec((128, 256, 128), act="gelu", dtype=dtype)
    cells = {i: entry(c) for i, c in enumerate(LINKED, 1)}
    plain = {i: entry(KernelConfig.from_dict({**c, "pdl": False})) for i, c in cells.items()}
    mod, _ = load_generated(spec, gpu_key="test", table=cells)
    hopper = torch.cuda.get_device_capability() >= (9, 0)
    for m in (1, 37, 1000):
        x, weights, biases = random_problem(spec, m, device="cuda")
        x = x * 4  # outputs of the headline's scale: the chain neither dies out nor blows up
        for i in cells:
            runs = []
            for cell in (cells[i], plain[i]):
                y = x
                for _ in range(20):
                    y = mod._launch(y, weights, biases, cell)
                runs.append(y)
            same(runs[0], runs[1], cells[i])
            assert torch.isfinite(runs[0]).all() and runs[0].abs().max() > 0
            one = mod._launch(x, weights, biases, cells[i])
            err = rel_error(one, reference(spec, x, weights, biases))
            assert err <= TOLERANCE[dtype], (m, cells[i]["kernel"], err)
    names = {pair: name for name, pair in mod.KERNELS.items()}  # (function, tiles) -> its name
    compiled = mod._RT.compiled
    linked = {(names[k[0]], k[4]) for k, c in compiled.items() if c.run.launch_pdl is True}
    for key, c in compiled.items():  # a PDL launch is its plain launch's binary (lanes.Linked)
        if key[4]:
            assert c.compiled is compiled[key[:4] + (False,) + key[5:]]
    first = {c["kernel"] for c in cells.values()}
    assert {name for name, _ in linked} >= (first if hopper else set())
    static = torch.randn(37, 128, device="cuda", dtype=x.dtype)
    for i in cells:
        outs = []
        for cell in (cells[i], plain[i]):
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                mod._launch(static, weights, biases, cell)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                y = static
                for _ in range(20):
                    y = mod._launch(y, weights, biases, cell)
            graph.replay()
            outs.append(y.clone())
        same(outs[0], outs[1], cells[i])
