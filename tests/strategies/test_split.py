"""split: its kernel under the interpreter (twice: the workspace must be left zero) and the
rules that keep it to small batches and distinct kernels."""

import pytest
import torch

from mlpgen.space import dominated_reason, infeasible_reason, search_space
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import TOLERANCE

CONFIGS = [
    KernelConfig(strategy="split", block_m=16, chunk=16, block_n=16, block_k=32),
    KernelConfig(strategy="split", block_m=32, chunk=32, block_n=32, block_k=16),
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
    """Several row blocks and hidden chunks (M not a multiple of block_m, odd widths), each
    config launched twice: the second launch is right only if the first left its workspace
    rows and arrival counters zero again."""
    spec = MLPSpec(widths, act=act, out_act=out_act, dtype=dtype, bias=bias)
    errors, _, (acc, counts) = run_configs(spec, CONFIGS, m, reuse=True)
    assert all(err <= TOLERANCE[dtype] for err in errors), errors
    assert acc.shape == (m, widths[-1]) and acc.dtype == torch.float32
    assert not acc.any() and not counts.any()


@pytest.mark.interpret
def test_the_public_path_shares_its_workspace_between_calls(run_configs):
    """Without mlpgen.runtime (here: the interpreter) a module's calls share one workspace per
    strategy and device, grown by doubling when a call has more rows, instead of zeroing a
    fresh one each call: every call stays right on what the previous one left."""
    from mlpgen.verify import check, random_problem, reference

    spec = MLPSpec((100, 37, 10), act="gelu", dtype="fp32")
    _, mod = run_configs(spec, CONFIGS[:1], 20, with_module=True)
    ((rows, held),) = mod._WORKSPACES.values()
    assert rows == 20
    cell = next(iter(mod.TUNED["test|sm0|0"].values()))
    for m, grown in ((13, 20), (20, 20), (37, 40)):
        x, weights, biases = random_problem(spec, m, seed=m)
        y = mod._launch(x, weights, biases, cell)
        assert check(y, reference(spec, x, weights, biases), spec.dtype).ok
        ((rows, now),) = mod._WORKSPACES.values()
        assert rows == grown and (now is held) == (grown == 20)
    assert not any(t.any() for t in now)


def test_small_batches_two_layers_and_distinct_kernels():
    """Its atomics' traffic grows with the rows: searched up to 4096 rows. A chunk past the
    hidden width (a block_n past the output width) renders the smallest one that covers it."""
    headline = MLPSpec((256, 512, 256))
    cfg = KernelConfig("split", block_m=16, chunk=32, block_n=256, block_k=128)
    assert infeasible_reason(headline, cfg) is None
    assert "2 layers" in infeasible_reason(MLPSpec((256, 512, 512, 256)), cfg)
    assert cfg in search_space(headline, 4096)
    assert "4096 rows" in dominated_reason(headline, cfg, 8192)
    assert cfg not in search_space(headline, 8192)
    narrow = MLPSpec((64, 40, 100))
    wide_chunk = KernelConfig("split", block_m=16, chunk=128, block_n=128, block_k=128)
    assert "same kernel as 64" in dominated_reason(narrow, wide_chunk, 64)
    wide_n = KernelConfig("split", block_m=16, chunk=64, block_n=256, block_k=128)
    assert "same kernel as 128" in dominated_reason(narrow, wide_n, 64)
