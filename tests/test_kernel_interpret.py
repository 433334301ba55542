"""What every kernel shares, run through Triton's interpreter against the fp32 reference: GELU
through the module's tanh fit, the module's entry points, its reference. Each strategy's own
kernel is tested in tests/strategies/test_<strategy>.py. Small sizes: the interpreter runs
every program in Python.

bf16 is checked on the GPU only: the interpreter's bf16 tl.dot returns garbage (seen with
triton 3.9: a 16x16 bf16 dot off by 1e10), while bf16 loads and stores are right."""

import pytest
import torch
import triton
import triton.language as tl
from conftest import assert_matches

from mlpgen.activations import ACTIVATIONS
from mlpgen.render import render_kernel
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.verify import TOLERANCE, random_problem, reference

pytestmark = pytest.mark.interpret
KEY = "test|sm0|0"


_GELU = None


@triton.jit
def _apply_gelu(x_ptr, y_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(y_ptr + i, _GELU(tl.load(x_ptr + i)))


def test_gelu_kernels_use_the_tanh_fit(run_configs):
    """Every kernel takes GELU from the module's _gelu (erf through a tanh fit), the persist
    and stream kernels too (odd widths, M not a multiple of block_m), fp16 kernels through the
    packed _gelu_f16 (its exact form here); the fit itself, with the interpreter's exact tanh,
    is within 4.2e-5 * |x| / 2 of torch's exact GELU over [-12, 12]."""
    global _GELU
    spec = MLPSpec((37, 70, 50, 9), act="gelu", dtype="fp32")
    cfg = KernelConfig("persist", block_m=16, block_n=32, block_k=16)
    src = render_kernel(spec, cfg)
    assert src.count("(_gelu(acc)).to(tl.float32)") == 2 and "erf" not in src
    errors, mod = run_configs(spec, [cfg], 45, with_module=True)
    assert errors[0] <= 1e-4, errors  # fp32 through the interpreter: the fit's error, no tf32
    stream_spec = MLPSpec((37, 70, 9), act="gelu", dtype="fp32")
    stream = KernelConfig("stream", block_m=16, block_n=32, chunk=32, num_stages=3)
    assert "h = (_gelu(s)).to(tl.float32)" in render_kernel(stream_spec, stream)
    assert run_configs(stream_spec, [stream], 45)[0] <= 1e-4
    half = MLPSpec((37, 70, 9), act="gelu", dtype="fp16")
    assert "h = _gelu_f16(s)" in render_kernel(half, stream)
    assert run_configs(half, [stream], 45)[0] <= TOLERANCE["fp16"]
    _GELU = mod._gelu  # what _apply_gelu calls (the interpreter reads globals)
    x = torch.linspace(-12, 12, 4096)
    y = torch.empty_like(x)
    _apply_gelu[(1,)](x, y, 4096)
    x = x.double()
    err = (y.double() - torch.nn.functional.gelu(x)).abs()
    assert (err <= 0.5 * x.abs() * 4.2e-5 + 1e-6).all()
    assert err.max() > 1e-6  # the fit, not an exact erf


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
    assert_matches(y.reshape(-1, 10), reference(spec, x, weights, biases), "fp16")
    xt = x[:, :100].t().contiguous().t()  # non-contiguous view with the same values
    assert not xt.is_contiguous()
    assert torch.equal(mod.mlp(xt, weights, biases), mod.mlp(x, weights, biases))


def test_reference_agrees_with_verify_reference(load_generated):
    spec = MLPSpec((6, 7, 3), act="gelu_tanh", out_act="tanh", dtype="fp32", bias=False)
    mod, _ = load_generated(spec)
    x, weights, biases = random_problem(spec, 5)
    torch.testing.assert_close(mod.reference(x, weights, biases), reference(spec, x, weights))
    assert ACTIVATIONS["gelu_tanh"].torch_fn(torch.ones(1)).item() == pytest.approx(0.8412, 1e-3)
