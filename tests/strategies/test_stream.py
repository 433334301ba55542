"""stream: its kernel under the interpreter, pointer loads and TMA (descriptors with partial
boxes), and its feasibility rules."""

from dataclasses import replace

import pytest
import torch
from conftest import assert_matches

from mlpgen.emit import entry
from mlpgen.render import render_kernel
from mlpgen.space import dominated_reason, infeasible_reason
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import TOLERANCE, random_problem, reference

KEY = "test|sm0|0"
CONFIGS = [
    KernelConfig(strategy="stream", block_m=16, block_n=16, chunk=32),
    KernelConfig(strategy="stream", block_m=32, block_n=32, chunk=64),
]
TMA = [
    KernelConfig(strategy="stream", block_m=16, block_n=16, chunk=32, num_stages=2, tma=True),
    KernelConfig(strategy="stream", block_m=32, block_n=32, chunk=64, num_stages=2, tma=True),
]


@pytest.mark.interpret
@pytest.mark.parametrize(
    "widths, act, out_act, dtype, bias, m",
    [
        ((100, 37, 10), "gelu", "none", "fp16", True, 97),
        ((20, 30, 5), "tanh", "sigmoid", "fp32", False, 33),
        ((37, 70, 130), "relu", "silu", "fp32", True, 1),
    ],
)
def test_kernel_matches_reference(run_configs, widths, act, out_act, dtype, bias, m):
    spec = MLPSpec(widths, act=act, out_act=out_act, dtype=dtype, bias=bias)
    for err in run_configs(spec, CONFIGS, m):
        assert err <= TOLERANCE[dtype]


def test_feasibility():
    """Two layers only; x's chunks, the output's accumulators and a hidden slice in
    registers; a block_n past the hidden width renders what a narrower one does; the loop's
    weight tiles, num_stages deep, and x in shared memory."""
    headline = MLPSpec((256, 512, 256))
    cfg = KernelConfig("stream", block_m=128, block_n=64, chunk=128, num_warps=8, num_stages=2)
    assert infeasible_reason(headline, cfg, 232448) is None
    assert "shared memory" in infeasible_reason(headline, replace(cfg, num_stages=3), 232448)
    thin = KernelConfig("stream", block_m=128, block_n=32, chunk=64, num_warps=4)
    assert "registers" in infeasible_reason(headline, thin, 232448)
    assert "2 layers" in infeasible_reason(MLPSpec((256, 512, 512, 256)), CONFIGS[0])
    narrow = MLPSpec((64, 20, 10))
    assert "same kernel" in infeasible_reason(narrow, KernelConfig("stream", block_n=64))
    narrow_chunks = MLPSpec((3, 5, 2))  # every chunk >= 16 renders the same kernel
    stream = KernelConfig(strategy="stream", block_m=16, chunk=128)
    assert "same kernel as chunk 64" in dominated_reason(narrow_chunks, stream, 64)
    assert render_kernel(narrow_chunks, stream).count("tl.dot") == 2


@pytest.mark.interpret
@pytest.mark.parametrize(
    "widths, act, out_act, dtype, bias, m",
    [
        # rows of 16-byte multiples, none a multiple of the tiles: partial boxes load zeros
        # past every edge and store only what is inside
        ((40, 72, 24), "gelu", "none", "fp16", True, 97),
        ((36, 20, 12), "sigmoid", "tanh", "fp32", False, 33),
        ((8, 136, 200), "relu", "silu", "fp32", True, 1),
    ],
)
def test_tma_kernel_matches_reference(run_configs, widths, act, out_act, dtype, bias, m):
    spec = MLPSpec(widths, act=act, out_act=out_act, dtype=dtype, bias=bias)
    for err in run_configs(spec, TMA, m):
        assert err <= TOLERANCE[dtype]


@pytest.mark.interpret
def test_a_misaligned_input_takes_the_torch_path_with_tma(load_generated):
    """TMA needs 16-byte aligned bases: a view one element into its storage runs the torch
    path instead (the kernel would fault on a GPU), an aligned one the kernel."""
    spec = MLPSpec((40, 72, 24), act="gelu", dtype="fp16")
    cell = entry(TMA[0])
    mod, _ = load_generated(spec, gpu_key=KEY, table={1: cell})
    x, weights, biases = random_problem(spec, 21)
    launched = []
    real = mod._run
    mod._run = lambda kernel, *args, **kw: launched.append(kernel) or real(kernel, *args, **kw)
    shifted = torch.empty(21 * 40 + 1, dtype=x.dtype)[1:].view(21, 40).copy_(x)
    assert shifted.data_ptr() % 16 and torch.equal(shifted, x)
    ref = reference(spec, x, weights, biases)
    for inp, runs in ((shifted, 0), (x, 1)):
        assert_matches(mod._launch(inp, weights, biases, cell), ref, "fp16")
        assert len(launched) == runs


def test_tma_rows_must_be_16_byte_multiples():
    """TMA moves rows whose strides are multiples of 16 bytes: 100 fp16 values (200 bytes)
    are not, 40 (80 bytes) are; fp32 rows of 36 values (144 bytes) are."""
    cfg = TMA[0]
    assert "16 bytes" in infeasible_reason(MLPSpec((100, 72, 24)), cfg)
    assert infeasible_reason(MLPSpec((40, 72, 24)), cfg) is None
    assert infeasible_reason(MLPSpec((36, 20, 12), dtype="fp32"), cfg) is None


def test_an_earlier_stream_tma_cell_reads_as_stream_with_tma():
    """Modules written before TMA became a flag of stream name the strategy stream_tma: their
    cells (and CUDA-graph winners) read as stream with tma, under the same kernel names."""
    from mlpgen.strategies import upgrade_cell

    old = dict(TMA[1].to_dict(), strategy="stream_tma", kernel="_k_stream_tma_m32_n32_c64")
    del old["tma"]
    new = upgrade_cell(old | {"graph_strategy": "stream_tma", "graph_block_m": 16})
    assert new["strategy"] == new["graph_strategy"] == "stream"
    assert new["tma"] is new["graph_tma"] is True
    assert KernelConfig.from_dict(new) == TMA[1]
    assert TMA[1].kernel_name == old["kernel"]
    assert upgrade_cell(entry(TMA[1])) == entry(TMA[1])
