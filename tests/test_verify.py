"""The one check (element-wise, per-dtype tolerances, poisoned buffers) and the one problem
generator."""

import math

import pytest
import torch

from mlpgen.emit import entry
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import (
    TOLERANCE,
    TOLERANCES,
    check,
    check_run,
    poisoned_allocations,
    random_problem,
    reference,
    rel_error,
)

SMALL = MLPSpec((32, 64, 16), act="gelu", dtype="fp16")


@pytest.fixture(scope="module")
def large():
    """The fp32 reference at M = 262144 and the same output rounded to fp16, as a right fp16
    kernel's would be."""
    x, weights, biases = random_problem(SMALL, 262144, seed=3)
    ref = reference(SMALL, x, weights, biases)
    return ref, ref.half()


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_rounding_to_the_dtype_passes(large, dtype):
    ref, _ = large
    rounded = ref.to({"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dtype])
    result = check(rounded, ref, dtype)
    assert result.ok and result.err < 0.5 and result.reason == "", result


def test_one_wrong_row_fails_at_a_large_m(large):
    """One row of 262144 off by 5%: a relative norm over the whole output does not see it (it
    passes that bound by far), the element-wise check does, and says where."""
    ref, out = large
    out = out.clone()
    out[200_001] *= 1.05
    assert rel_error(out, ref) < TOLERANCE["fp16"] / 10
    result = check(out, ref, "fp16")
    assert not result.ok and result.err > 1 and result.where[0] == 200_001
    assert result.got == pytest.approx(float(out[result.where]))
    assert result.want == pytest.approx(float(ref[result.where]))
    assert result.reason.startswith(f"element [200001, {result.where[1]}] is ")


def test_a_nan_fails_at_the_first_one(large):
    ref, out = large
    out = out.clone()
    out[7, 3] = out[9000] = math.nan
    result = check(out, ref, "fp16")
    assert not result.ok and result.err == math.inf and result.where == (7, 3)
    assert "NaN/Inf" in result.reason


def test_a_wrong_shape_fails():
    ref = torch.randn(5, 4)
    result = check(ref[:4], ref, "fp32")
    assert not result.ok and result.err == math.inf and "shape (4, 4)" in result.reason
    assert check(ref[:0], ref[:0], "fp32").ok


def test_tolerances_are_one_table_with_an_entry_per_dtype():
    assert set(TOLERANCES) == set(TOLERANCE) == {"fp16", "bf16", "fp32"}
    # bf16 has 3 mantissa bits fewer than fp16; fp32 dots run in tf32 (fp16's mantissa) on GPUs
    assert TOLERANCES["fp16"].rtol <= TOLERANCES["fp32"].rtol < TOLERANCES["bf16"].rtol
    ref = torch.tensor([0.0, 1.0, -4.0])
    tol = TOLERANCES["fp16"]
    edge = ref + 0.99 * (tol.atol + tol.rtol * ref.abs())
    assert check(edge, ref, "fp16").ok
    assert not check(ref + 1.01 * (tol.atol + tol.rtol * ref.abs()), ref, "fp16").ok


def test_poisoned_allocations_fill_fresh_buffers_with_nan_and_leave_zeros():
    before = torch.are_deterministic_algorithms_enabled()
    with poisoned_allocations():
        assert torch.isnan(torch.empty(4, 3)).all()
        assert torch.isnan(torch.zeros(2).new_empty(5)).all()
        assert torch.isnan(torch.empty_like(torch.ones(3, dtype=torch.float16))).all()
        assert (torch.zeros(3) == 0).all()
    assert torch.are_deterministic_algorithms_enabled() == before


def test_check_run_rejects_stale_memory_and_writes_past_m():
    spec = MLPSpec((8, 12, 5), dtype="fp32")

    def right(x, w, b, out):
        return out.copy_(reference(spec, x, w, b))

    def stale(x, w, b, out):
        y = torch.empty_like(out)  # never written: without the poison, old memory
        return y

    def past_m(x, w, b, out):
        right(x, w, b, out)
        out.as_strided((out.shape[0] + 1, out.shape[1]), out.stride())[-1] = 0.0

    assert check_run(right, spec, 21, seed=1).ok
    assert "NaN/Inf" in check_run(stale, spec, 21, seed=1).reason
    assert check_run(past_m, spec, 21, seed=1).reason == "wrote rows past M=21"
    wrong = check_run(lambda x, w, b, out: right(x, w, b, out) * 1.1, spec, 21, seed=1)
    assert not wrong.ok and wrong.reason.endswith("at M=21")


@pytest.mark.interpret
@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_the_real_kernel_of_a_small_spec_passes(load_generated, dtype):
    """A rendered kernel under the interpreter, odd widths and an M that is not a multiple of
    its row tile, on two inputs."""
    spec = MLPSpec((100, 37, 10), act="gelu", dtype=dtype)
    cell = entry(KernelConfig(block_m=16, chunk=32, num_warps=4))
    mod, _ = load_generated(spec, gpu_key="test|sm0|0", table={1: cell})

    def run(x, w, b, out):
        return mod._launch(x, w, b, cell, out=out)

    for seed in (1, 2):
        result = check_run(run, spec, 45, seed=seed)
        assert result.ok and result.err < 0.5, (seed, result)


def test_random_problem_scales_and_seeds():
    spec = MLPSpec((64, 32))
    x, weights, biases = random_problem(spec, 1000, "cpu", seed=1)
    assert x.shape == (1000, 64) and weights[0].shape == (32, 64) and biases[0].shape == (32,)
    assert x.dtype == weights[0].dtype == torch.float16
    assert weights[0].abs().max() <= math.sqrt(3 / 64) and biases[0].abs().max() <= 0.1
    assert 0.9 < x.float().std() < 1.1
    again, _, _ = random_problem(spec, 1000, "cpu", seed=1)
    other, _, _ = random_problem(spec, 1000, "cpu", seed=2)
    assert torch.equal(x, again) and not torch.equal(x, other)
    assert random_problem(MLPSpec((64, 32), bias=False), 3, seed=1)[2] is None
