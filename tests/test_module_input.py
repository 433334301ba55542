"""What a generated module does with every input it is given: each case is (what it is
called with, the exception it raises, a fragment of its message), on the torch path (CPU) and
on the kernel path (the Triton interpreter). Everything a kernel indexes (weight and bias count,
shapes, dtypes, devices) is checked against SPEC before a kernel sees it; valid calls give the
reference result."""

import numpy as np
import pytest
import torch

from mlpgen.spec import MLPSpec

SPEC = MLPSpec((24, 40, 8), act="gelu", dtype="fp32")
M = 5


def good():
    """x, weights, biases of SPEC (M rows)."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(M, 24, generator=gen)
    weights = [torch.randn(40, 24, generator=gen) / 5, torch.randn(8, 40, generator=gen) / 6]
    biases = [torch.randn(40, generator=gen), torch.randn(8, generator=gen)]
    return x, weights, biases


def with_weight(i, value):
    x, w, b = good()
    w[i] = value(w[i]) if callable(value) else value
    return x, w, b


def with_bias(i, value):
    x, w, b = good()
    b[i] = value(b[i]) if callable(value) else value
    return x, w, b


def with_x(value):
    x, w, b = good()
    return (value(x) if callable(value) else value), w, b


META = torch.device("meta")

# name -> (arguments (x, weights, biases[, out]), exception or None, message fragment)
CASES = {
    "valid": (good, None, ""),
    "valid tuples": (lambda: (good()[0], tuple(good()[1]), tuple(good()[2])), None, ""),
    "valid leading dims": (lambda: with_x(lambda x: x.view(1, M, 24)), None, ""),
    "valid out": (lambda: (*good(), torch.empty(M, 8)), None, ""),
    "x None": (lambda: with_x(None), TypeError, "x must be a torch.Tensor [..., 24]"),
    "x list": (lambda: with_x([[0.0] * 24]), TypeError, "got list"),
    "x numpy": (lambda: with_x(np.zeros((M, 24), np.float32)), TypeError, "got ndarray"),
    "x int": (lambda: with_x(3), TypeError, "got int"),
    "x width": (lambda: with_x(torch.randn(M, 23)), ValueError, "expected input [..., 24], got"),
    "x scalar": (lambda: with_x(torch.tensor(1.0)), ValueError, "expected input [..., 24]"),
    "x float64": (lambda: with_x(torch.randn(M, 24).double()), TypeError, "input is torch.float64"),
    "x int64": (lambda: with_x(torch.ones(M, 24, dtype=torch.long)), TypeError, "torch.int64"),
    "x sparse": (lambda: with_x(lambda x: x.to_sparse()), TypeError, "x must be a dense tensor"),
    "weight sparse": (
        lambda: with_weight(1, lambda w: w.to_sparse()),
        TypeError,
        "layer 1 weight must be a dense tensor, got layout torch.sparse_coo",
    ),
    "weights None": (lambda: (good()[0], None, good()[2]), TypeError, "weights must be a list"),
    "weights tensor": (
        lambda: (good()[0], torch.randn(2, 40, 24), good()[2]),
        TypeError,
        "weights must be a list of 2 tensors, got Tensor",
    ),
    "one weight": (lambda: (good()[0], good()[1][:1], good()[2]), ValueError, "2 weights, got 1"),
    "three weights": (
        lambda: (good()[0], good()[1] * 2, good()[2]),
        ValueError,
        "expected 2 weights, got 4",
    ),
    "biases None": (lambda: (*good()[:2], None), TypeError, "biases must be a list"),
    "one bias": (lambda: (*good()[:2], good()[2][:1]), ValueError, "expected 2 biases, got 1"),
    "weight transposed": (
        lambda: with_weight(0, lambda w: w.t().contiguous()),
        ValueError,
        "layer 0 weight has shape [24, 40], expected [40, 24]",
    ),
    "weight too small": (
        lambda: with_weight(0, torch.randn(16, 24)),
        ValueError,
        "layer 0 weight has shape [16, 24], expected [40, 24]",
    ),
    "last weight": (
        lambda: with_weight(1, torch.randn(8, 39)),
        ValueError,
        "layer 1 weight has shape [8, 39], expected [8, 40]",
    ),
    "weight 1-D": (lambda: with_weight(1, torch.randn(320)), ValueError, "layer 1 weight has"),
    "weight 3-D": (lambda: with_weight(0, torch.randn(1, 40, 24)), ValueError, "[1, 40, 24]"),
    "bias short": (
        lambda: with_bias(0, torch.randn(39)),
        ValueError,
        "layer 0 bias has shape [39], expected [40]",
    ),
    "bias 2-D": (lambda: with_bias(1, torch.randn(1, 8)), ValueError, "layer 1 bias has shape"),
    "bias scalar": (lambda: with_bias(1, torch.tensor(0.0)), ValueError, "has shape [], expected"),
    "weight None": (lambda: with_weight(0, None), TypeError, "layer 0 weight must be a torch"),
    "weight list": (lambda: with_weight(1, [[0.0] * 40] * 8), TypeError, "layer 1 weight must"),
    "bias numpy": (lambda: with_bias(0, np.zeros(40)), TypeError, "layer 0 bias must be"),
    "weight float16": (
        lambda: with_weight(0, lambda w: w.half()),
        TypeError,
        "layer 0 weight is torch.float16",
    ),
    "bias bfloat16": (
        lambda: with_bias(1, lambda b: b.bfloat16()),
        TypeError,
        "layer 1 bias is torch.bfloat16",
    ),
    "weight on meta": (
        lambda: with_weight(0, lambda w: w.to(META)),
        ValueError,
        "layer 0 weight is on meta, the input on cpu",
    ),
    "bias on meta": (lambda: with_bias(1, lambda b: b.to(META)), ValueError, "layer 1 bias is on"),
    "out list": (lambda: (*good(), [0.0] * 8), TypeError, "out must be a tensor, got list"),
    "out shape": (lambda: (*good(), torch.empty(M, 9)), ValueError, "out must be a torch.float32"),
    "out in x": (
        lambda: (lambda x: (x[:, :8], *good()[1:], x.view(-1)[: M * 8].view(M, 8)))(
            torch.randn(M, 24)
        ),
        ValueError,
        "expected input [..., 24]",
    ),
    "out overlaps x": (
        lambda: (lambda x: (x, *good()[1:], x.view(-1)[8 : 8 + M * 8].view(M, 8)))(
            torch.randn(M, 24)
        ),
        ValueError,
        "must not share memory with the input",
    ),
}


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    """The module for SPEC and one without bias, loaded once."""
    from mlpgen.emit import module_path, write_module
    from mlpgen.selfcheck import load_module

    folder = tmp_path_factory.mktemp("input")
    out = {}
    for spec in (SPEC, MLPSpec((24, 40, 8), act="gelu", dtype="fp32", bias=False)):
        out[spec.bias] = load_module(write_module(module_path(folder, spec), spec))
    return out


@pytest.fixture(params=["torch", "kernel"])
def path(request, monkeypatch, modules):
    """The module for SPEC on the torch path (CPU without the interpreter) or the kernel path."""
    mod = modules[True]
    if request.param == "kernel" and not mod._INTERPRET:
        pytest.skip("the kernel path on the CPU needs TRITON_INTERPRET=1")
    monkeypatch.setattr(mod, "_INTERPRET", request.param == "kernel")
    return mod


def test_the_table_has_enough_cases():
    assert len(CASES) >= 30


@pytest.mark.parametrize("name", sorted(CASES))
def test_module_input(path, name):
    make, error, fragment = CASES[name]
    args = make()
    x, weights, biases, *out = args
    call = lambda: path.mlp(x, weights, biases, out=out[0] if out else None)  # noqa: E731
    if error is None:
        y = call()
        want = path.reference(x.reshape(-1, 24), list(weights), list(biases))
        torch.testing.assert_close(y.reshape(-1, 8), want, atol=1e-4, rtol=1e-4)
        if out:
            assert y is out[0]
        return
    with pytest.raises(error) as caught:
        call()
    assert fragment in str(caught.value)


@pytest.mark.parametrize(
    "x, error, fragment",
    [
        (None, TypeError, "x must be a torch.Tensor"),
        ([1.0] * 24, TypeError, "got list"),
        (np.zeros((2, 24), np.float32), TypeError, "got ndarray"),
        (torch.randn(2, 25), ValueError, "expected input [..., 24]"),
    ],
)
def test_fused_mlp_input(path, x, error, fragment):
    with pytest.raises(error) as caught:
        path.FusedMLP()(x)
    assert fragment in str(caught.value)


def test_a_module_without_bias_refuses_biases(modules):
    mod = modules[False]
    x, w, b = good()
    with pytest.raises(ValueError, match="generated without bias; pass biases=None"):
        mod.mlp(x, w, b)
    y = mod.mlp(x, w)
    torch.testing.assert_close(y, mod.reference(x, w), atol=1e-4, rtol=1e-4)
