"""rowblock: its kernel under the interpreter (both load orders, every activation, masked rows
past M) and its feasibility rules.

bf16 is checked on the GPU only: the interpreter's bf16 tl.dot returns garbage (seen with
triton 3.9: a 16x16 bf16 dot off by 1e10), while bf16 loads and stores are right."""

import math

import pytest
import torch
from conftest import assert_matches

from mlpgen import space
from mlpgen.activations import ACTIVATIONS
from mlpgen.emit import entry
from mlpgen.layout import prefetches
from mlpgen.render import render_kernel
from mlpgen.space import infeasible_reason, search_space
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies import rowblock
from mlpgen.verify import TOLERANCE, random_problem, reference

HEADLINE = MLPSpec((256, 512, 256))
KEY = "test|sm0|0"

CASES = [
    # widths, act, out_act, dtype, bias, M, configs as (block_m, chunk)
    ((37, 10), "relu", "none", "fp32", True, 1, [(16, 16), (32, 64)]),
    ((100, 37, 10), "gelu", "none", "fp16", True, 97, [(16, 32), (32, 64)]),
    ((64, 129, 33, 16), "silu", "none", "fp16", False, 50, [(16, 32)]),
    ((20, 30, 40, 30, 20, 5), "tanh", "sigmoid", "fp32", True, 33, [(16, 16)]),
    ((48, 80, 24), "leaky_relu", "relu", "fp32", False, 7, [(32, 32)]),
]


@pytest.fixture(params=[True, False], ids=["prefetch", "in-place"])
def prefetch(request, monkeypatch):
    """Both load orders: every weight tile before the first dot (layout.prefetches, where they
    fit in registers) and each where it is used."""
    from mlpgen import layout

    monkeypatch.setattr(layout, "PREFETCH_REGS", 1 << 30 if request.param else -1)
    return request.param


@pytest.mark.interpret
@pytest.mark.parametrize("widths, act, out_act, dtype, bias, m, cfgs", CASES)
def test_kernel_matches_reference(
    run_configs, prefetch, widths, act, out_act, dtype, bias, m, cfgs
):
    spec = MLPSpec(widths, act=act, out_act=out_act, dtype=dtype, bias=bias)
    configs = [KernelConfig(block_m=b, chunk=c) for b, c in cfgs]
    comment = render_kernel(spec, configs[0]).splitlines()[2]
    assert comment.endswith("prefetched") == prefetch, comment
    for err in run_configs(spec, configs, m):
        assert err <= TOLERANCE[dtype]


@pytest.mark.interpret
@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_every_activation(run_configs, dtype):
    for act in ACTIVATIONS:
        spec = MLPSpec((3, 5, 2), act=act, out_act=act, dtype=dtype)
        [err] = run_configs(spec, [KernelConfig(block_m=16, chunk=16)], 11)
        assert err <= TOLERANCE[dtype], act


@pytest.mark.interpret
def test_poisoned_rows_past_m_are_untouched(load_generated):
    """Rows beyond M belong to nobody: the kernel must mask its stores there."""
    spec = MLPSpec((24, 40, 9), act="relu", dtype="fp32")
    mod, _ = load_generated(spec, gpu_key=KEY, table={1: entry(KernelConfig(block_m=32, chunk=16))})
    x, weights, biases = random_problem(spec, 13)
    out = torch.full((20, 9), math.nan)
    mod._launch(x, weights, biases, mod.TUNED[KEY][1], out=out[:13])
    assert torch.isnan(out[13:]).all()
    assert_matches(out[:13], reference(spec, x, weights, biases), "fp32")


def test_tiles_that_compile_past_the_limit_are_dropped():
    """Both tiles of 784,1024,1024,10 fp32 that fit the register estimate ran past the 60 s
    compile limit on the H200 (128 KiB of activations per program): dropped before compiling.
    The headline's largest tile (96 KiB, fp16) compiled in seconds: kept."""
    fp32 = MLPSpec((784, 1024, 1024, 10), act="relu", dtype="fp32")
    for warps in (4, 8):
        cfg = KernelConfig(block_m=16, chunk=128, num_warps=warps)
        assert space.reason_kind(infeasible_reason(fp32, cfg)) in ("registers", "compile time")
    held = infeasible_reason(fp32, KernelConfig(block_m=16, chunk=64, num_warps=8))
    assert "compile time" in held and space.reason_kind(held) == "compile time"
    assert infeasible_reason(HEADLINE, KernelConfig(block_m=64, chunk=64, num_warps=8)) is None
    assert "rowblock" not in {c.strategy for c in search_space(fp32, 64).candidates}


def test_feasibility_reasons():
    cfg = KernelConfig(block_m=16, chunk=32, num_warps=4)
    assert "dots" in infeasible_reason(MLPSpec((1024, 1024, 1024)), cfg)
    big = KernelConfig(block_m=128, chunk=64, num_warps=2)
    assert "registers" in infeasible_reason(HEADLINE, big)
    assert "shared memory" in infeasible_reason(
        HEADLINE, KernelConfig(block_m=64, chunk=128, num_warps=8), max_shared=32 * 1024
    )
    assert "tl.dot" in infeasible_reason(HEADLINE, KernelConfig(block_m=8))
    assert "chip" in infeasible_reason(MLPSpec((4096, 8)), cfg)


def test_register_file_caps_registers_with_many_warps():
    """16 warps x 32 threads share 64K registers: at most 128 each, not 255."""
    cfg = KernelConfig(block_m=128, chunk=128, num_warps=16)
    assert rowblock.registers_per_thread(HEADLINE, cfg) < 255
    assert "max 128" in infeasible_reason(HEADLINE, cfg)


def test_loads_its_weights_first_where_they_fit_in_registers():
    """rowblock loads every weight tile before its first dot where its whole register
    estimate stays within layout.PREFETCH_REGS, else each where it is used: never a reason to
    drop a config (the estimate counts what the kernel holds)."""
    deep = MLPSpec((64, 64, 64, 64, 64, 3))
    small = KernelConfig(block_m=64, chunk=64, num_warps=4)  # the H200's winner from 64 rows
    assert prefetches(deep, small)
    assert "weights prefetched" in render_kernel(deep, small).splitlines()[2]
    big = KernelConfig(block_m=16, chunk=128, num_warps=8)  # 512 KiB of weights
    assert not prefetches(HEADLINE, big) and infeasible_reason(HEADLINE, big) is None
    assert "prefetched" not in render_kernel(HEADLINE, big)
    assert rowblock.registers_per_thread(deep, small) > rowblock.registers_per_thread(
        deep, KernelConfig(block_m=64, chunk=64, num_warps=8)
    )
