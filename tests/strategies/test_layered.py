"""layered: one fused GEMM per hidden layer under the interpreter, the last layer by torch."""

import pytest

from mlpgen.emit import entry
from mlpgen.space import infeasible_reason, search_space
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import TOLERANCE, random_problem, reference, rel_error

KEY = "test|sm0|0"
CONFIGS = [
    KernelConfig(strategy="layered", block_m=16, block_n=16, block_k=16),
    KernelConfig(strategy="layered", block_m=32, block_n=64, block_k=32),
]


@pytest.mark.interpret
@pytest.mark.parametrize(
    "widths, act, out_act, dtype, bias, m",
    [
        # 11 row tiles of 16 at M=161: a full group of 8 and a partial one
        ((100, 37, 10), "gelu", "none", "fp16", True, 161),
        ((20, 30, 40, 30, 5), "tanh", "sigmoid", "fp32", False, 33),
    ],
)
def test_kernels_match_reference(run_configs, widths, act, out_act, dtype, bias, m):
    """Odd widths (masked k and n tiles), M not a multiple of block_m, grouped program order
    with a partial group; the last layer by torch."""
    spec = MLPSpec(widths, act=act, out_act=out_act, dtype=dtype, bias=bias)
    errors = run_configs(spec, CONFIGS, m)
    assert all(err <= TOLERANCE[dtype] for err in errors), errors


@pytest.mark.interpret
def test_module_runs_one_kernel_per_hidden_layer(load_generated, monkeypatch):
    """The module's plan path (mlp()) launches each hidden layer's kernel once, in order."""
    spec = MLPSpec((24, 40, 48, 8), act="gelu", dtype="fp32")
    mod, _ = load_generated(spec, gpu_key=KEY, table={1: entry(CONFIGS[0])})
    mod.TUNED["default"] = {1: entry(CONFIGS[0])}  # the interpreter runs the default table
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


def test_a_hidden_layer_and_large_batches():
    """Nothing to fuse without a hidden layer; one launch per layer pays off from 1024 rows."""
    cfg = CONFIGS[1]
    assert "hidden layer" in infeasible_reason(MLPSpec((2048, 16)), cfg)
    deep = MLPSpec((784, 2048, 2048, 10))
    assert infeasible_reason(deep, cfg) is None
    assert "layered" in {c.strategy for c in search_space(deep, 4096).candidates}
    assert "layered" not in {c.strategy for c in search_space(deep, 256).candidates}
