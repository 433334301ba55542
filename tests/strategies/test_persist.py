"""persist: its kernel under the interpreter, its grid and its feasibility rules."""

import pytest
import torch

from mlpgen.emit import entry
from mlpgen.space import dominated_reason, infeasible_reason, search_space
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import TOLERANCE

HEADLINE = MLPSpec((256, 512, 256))
H200_SHARED = 232448
KEY = "test|sm0|0"

CONFIGS = [
    KernelConfig(strategy="persist", block_m=16, block_n=16, block_k=32),
    KernelConfig(strategy="persist", block_m=32, block_n=32, block_k=16),
    # the last layer in narrower tiles than the hidden ones (masked where 16 passes its width)
    KernelConfig(strategy="persist", block_m=16, block_n=32, block_k=32, last_block_n=16),
]


@pytest.mark.interpret
@pytest.mark.parametrize(
    "widths, act, out_act, dtype, bias, m",
    [
        ((37, 10), "relu", "none", "fp32", True, 1),
        ((100, 37, 10), "gelu", "none", "fp16", True, 97),
        ((20, 30, 40, 30, 20, 5), "tanh", "sigmoid", "fp32", True, 33),
        ((48, 80, 24), "leaky_relu", "relu", "fp16", False, 7),
    ],
)
def test_kernel_matches_reference(run_configs, widths, act, out_act, dtype, bias, m):
    """Under the interpreter the grid is one program (programs run one after another there,
    so a grid barrier with more would never open): this checks the tiling, masking and layer
    chaining; the GPU tests check the barrier with many programs."""
    spec = MLPSpec(widths, act=act, out_act=out_act, dtype=dtype, bias=bias)
    errors, _, (*hidden, sync) = run_configs(spec, CONFIGS, m, reuse=True)
    for err in errors:
        assert err <= TOLERANCE[dtype]
    # one program waits for no one: the barrier counter stays untouched
    assert [h.shape for h in hidden] == [(m, n) for n in widths[1:-1]] and sync.tolist() == [0]


def test_last_tiles_are_narrower_ones_up_to_their_bucket():
    """last_block_n: searched where it narrows the last layer's tiles (block_n wide and no
    wider than the last width), on more than one layer, in buckets up to 1024 rows."""

    def last(bn, lbn):
        return KernelConfig("persist", block_m=64, block_n=bn, num_stages=3, last_block_n=lbn)

    assert infeasible_reason(HEADLINE, last(64, 32)) is None
    assert "not searched" in infeasible_reason(HEADLINE, last(32, 64))
    one_layer = MLPSpec((256, 128))
    assert "same kernel" in infeasible_reason(one_layer, last(64, 32))
    narrow_out = MLPSpec((784, 1024, 1024, 10), act="relu", dtype="fp32")
    assert infeasible_reason(narrow_out, last(128, 16), H200_SHARED) is None  # 10 in 16
    assert "same kernel" in infeasible_reason(narrow_out, last(128, 32), H200_SHARED)
    cfg = last(64, 32)
    assert dominated_reason(HEADLINE, cfg, 1024) is None
    assert "1024 rows" in dominated_reason(HEADLINE, cfg, 1025)
    assert cfg in search_space(HEADLINE, 1024, H200_SHARED)
    assert cfg not in search_space(HEADLINE, 4096, H200_SHARED)
    assert last(64, 0) in search_space(HEADLINE, 4096, H200_SHARED)


def test_tiles_that_do_not_fit_or_repeat_a_narrower_kernel_are_dropped():
    """A 128 x 256 tile with 4 warps holds 256 fp32 accumulators a thread; a block_n past the
    widest layer renders what a narrower one does."""
    wide = KernelConfig("persist", block_m=128, block_n=256, num_warps=4, num_stages=3)
    assert "accumulator registers" in infeasible_reason(HEADLINE, wide, H200_SHARED)
    narrow = MLPSpec((64, 16, 10))
    assert "same kernel" in infeasible_reason(narrow, KernelConfig("persist", block_n=64))
    assert infeasible_reason(narrow, KernelConfig("persist", block_n=32)) is None


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


@pytest.mark.interpret
def test_configs_share_a_function_where_only_their_tiles_differ(run_configs):
    """Configs whose kernels differ only in tile sizes run one @triton.jit function with the
    tiles as constexpr arguments; a config whose tiles change the code (the hidden layer's 48
    columns need a mask in 32-column tiles, none in 16-column ones) gets a function of its
    own. Every one matches the reference at an M that is not a multiple of its tile."""
    from mlpgen.render import kernel_tiles

    spec = MLPSpec((40, 48, 9), act="silu", dtype="fp32")
    configs = [
        KernelConfig(strategy="persist", block_m=16, block_n=16, block_k=16),
        KernelConfig(strategy="persist", block_m=32, block_n=16, block_k=16, num_warps=8),
        KernelConfig(strategy="persist", block_m=16, block_n=32, block_k=16, last_block_n=16),
    ]
    errors, mod = run_configs(spec, configs, 21, with_module=True)
    assert all(err <= TOLERANCE["fp32"] for err in errors)
    pairs = [mod.KERNELS[c.kernel_name] for c in configs]
    assert [tiles for _, tiles in pairs] == [tuple(kernel_tiles(spec, c).values()) for c in configs]
    names = [function.fn.__name__ for function, _ in pairs]
    assert names == ["_k_persist", "_k_persist", "_k_persist_v2"]
    source = mod.__loader__.get_source(mod.__name__)
    assert source.count("def _k_persist") == 2 and "(cols[:, None] < 48)" in source
