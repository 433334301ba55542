"""stream: its kernel under the interpreter and its feasibility rules."""

from dataclasses import replace

import pytest

from mlpgen.render import render_kernel
from mlpgen.space import dominated_reason, infeasible_reason
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import TOLERANCE

CONFIGS = [
    KernelConfig(strategy="stream", block_m=16, block_n=16, chunk=32),
    KernelConfig(strategy="stream", block_m=32, block_n=32, chunk=64),
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
