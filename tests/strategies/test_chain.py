"""chain: one fused GEMM per layer under the interpreter, linked by programmatic dependent
launch (the interpreter has no PDL: the kernels' wait and release are the module's no-ops)."""

import dataclasses

import pytest
from conftest import assert_matches

from mlpgen.emit import entry
from mlpgen.render import kernel_names, render_kernel
from mlpgen.space import dominated_reason, infeasible_reason
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import TOLERANCE, random_problem, reference

KEY = "test|sm0|0"
CONFIGS = [
    KernelConfig(strategy="chain", block_m=16, block_n=16, block_k=16),
    KernelConfig(strategy="chain", block_m=32, block_n=64, block_k=32),
]


@pytest.mark.interpret
@pytest.mark.parametrize(
    "widths, act, out_act, dtype, bias, m",
    [
        # 11 row tiles of 16 at M=161: a full group of 8 and a partial one
        ((100, 37, 10), "gelu", "none", "fp16", True, 161),
        ((20, 30, 40, 30, 5), "tanh", "sigmoid", "fp32", False, 33),
        ((37, 70, 130), "relu", "silu", "fp32", True, 1),
    ],
)
def test_kernels_match_reference(run_configs, widths, act, out_act, dtype, bias, m):
    """Every layer a kernel, the last one with its output activation; odd widths, M not a
    multiple of block_m, a partial program group."""
    spec = MLPSpec(widths, act=act, out_act=out_act, dtype=dtype, bias=bias)
    errors = run_configs(spec, CONFIGS, m)
    assert all(err <= TOLERANCE[dtype] for err in errors), errors


@pytest.mark.interpret
def test_kernels_wait_for_their_input_and_release_the_next(load_generated, monkeypatch):
    """Every kernel waits for the previous one, then lets the next one launch, before its
    loads (releasing first took 1.60x the GPU time on the H200: the next layer's programs
    occupy SMs while they wait); the module launches them in order, the later ones with PDL
    where it is on (forced on here; the interpreter ignores it), the first where the cell says
    "pdl"."""
    spec = MLPSpec((24, 40, 48, 8), act="gelu", dtype="fp32")
    cfg = CONFIGS[0]
    assert cfg.kernel_name == "_k_chain_m16_n16_k16"
    assert kernel_names(spec, cfg) == [f"{cfg.kernel_name}_l{i}" for i in range(3)]
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
    names = {pair: name for name, pair in mod.KERNELS.items()}  # (function, tiles) -> its name
    monkeypatch.setattr(
        mod,
        "_run",
        lambda kernel, *a: launched.append((names[kernel], a[-1])) or real(*(kernel, *a[:-1])),
    )
    x, weights, biases = random_problem(spec, 21)
    name = cfg.kernel_name
    for linked in (False, True):
        mod.TUNED["default"] = {1: entry(dataclasses.replace(cfg, pdl=linked))}
        mod._forget_dispatch()
        launched.clear()
        y = mod.mlp(x, weights, biases)
        assert launched == [(f"{name}_l0", linked), (f"{name}_l1", True), (f"{name}_l2", True)]
        assert_matches(y, reference(spec, x, weights, biases), "fp32")


def test_middle_batches_and_persists_tiles():
    """Two layers at least; persist's tile rules over every layer; timed from 16 to 4096 rows,
    where the gap between short launches is a large share."""
    cfg = CONFIGS[1]
    assert "nothing to chain" in infeasible_reason(MLPSpec((2048, 16)), cfg)
    headline = MLPSpec((256, 512, 256))
    assert infeasible_reason(headline, cfg) is None
    wide = KernelConfig("chain", block_m=128, block_n=256, block_k=64, num_warps=4)
    assert "accumulator registers" in infeasible_reason(headline, wide)
    assert dominated_reason(headline, cfg, 64) is None
    assert "under 16 rows" in dominated_reason(headline, CONFIGS[0], 1)
    assert "over 4096 rows" in dominated_reason(headline, cfg, 8192)


def test_an_earlier_layered_cell_reads_as_chain():
    """Modules written while layered (a kernel per hidden layer, the last layer a cuBLAS GEMM)
    was a strategy of its own: their cells read as chain with the same tiles, launched plainly
    (layered's kernels did not wait for the previous kernel), graph winners too."""
    from mlpgen.strategies import upgrade_cell

    tiles = dict(block_m=64, block_n=128, block_k=64, num_warps=4, num_stages=3)
    old = {"strategy": "layered", **tiles, "kernel": "_k_layered_m64_n128_k64", "pdl": True}
    new = upgrade_cell(old | {f"graph_{k}": v for k, v in old.items()})
    assert new["strategy"] == new["graph_strategy"] == "chain"
    assert "pdl" not in new and "graph_pdl" not in new
    assert KernelConfig.from_dict(new) == KernelConfig("chain", **tiles)
