"""The generated module's Python side: FusedMLP, from_module, dispatch, input checks."""

import warnings

import pytest
import torch

from mlpgen.spec import MLPSpec


def sequential(widths, act=torch.nn.GELU, dtype=torch.float32, bias=True):
    layers = []
    for i, (k, n) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(torch.nn.Linear(k, n, bias=bias, dtype=dtype))
        if i < len(widths) - 2:
            layers.append(act())
    return torch.nn.Sequential(*layers)


@pytest.mark.interpret
def test_from_module_matches_sequential(load_generated):
    mod, _ = load_generated(MLPSpec((20, 33, 7), act="gelu", dtype="fp32"))
    seq = sequential((20, 33, 7))
    fused = mod.FusedMLP.from_module(seq)
    x = torch.randn(45, 20)
    torch.testing.assert_close(fused(x), seq(x), atol=1e-4, rtol=1e-4)


def test_from_module_refuses_mismatches(load_generated):
    mod, _ = load_generated(MLPSpec((20, 33, 7), act="gelu", dtype="fp32"))
    with pytest.raises(ValueError, match="shapes"):
        mod.FusedMLP.from_module(sequential((20, 32, 7)))
    with pytest.raises(ValueError, match="activations"):
        mod.FusedMLP.from_module(sequential((20, 33, 7), act=torch.nn.ReLU))
    with pytest.raises(ValueError, match="bias"):
        mod.FusedMLP.from_module(sequential((20, 33, 7), bias=False))


def test_input_checks(load_generated):
    mod, _ = load_generated(MLPSpec((8, 4), dtype="fp32"))
    fused = mod.FusedMLP()
    with pytest.raises(ValueError, match=r"\[\.\.\., 8\]"):
        fused(torch.randn(3, 9))
    with pytest.raises(TypeError, match="float32"):
        fused(torch.randn(3, 8, dtype=torch.float64))
    assert fused(torch.randn(0, 8)).shape == (0, 4)
    assert fused(torch.randn(2, 0, 8)).shape == (2, 0, 4)


def test_dispatch_nearest_bucket_and_unknown_gpu_warns_once(load_generated):
    mod, path = load_generated(MLPSpec((8, 4)))
    assert mod.nearest_bucket([1, 16, 64, 256], 1) == 1
    assert mod.nearest_bucket([1, 16, 64, 256], 3) == 1  # the log-scale midpoint of 1, 16 is 4
    assert mod.nearest_bucket([1, 16, 64, 256], 5) == 16
    assert mod.nearest_bucket([1, 16, 64, 256], 40) == 64
    assert mod.nearest_bucket([1, 16, 64, 256], 10**6) == 256
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cell = mod.config_for(1000, "Imaginary GPU|sm99|7")
        mod.config_for(3, "Imaginary GPU|sm99|7")
    assert cell == mod.TUNED["default"][1024]
    assert len(caught) == 1 and f"mlpgen retune {path}" in str(caught[0].message)


def test_cpu_without_interpreter_takes_reference(load_generated, monkeypatch):
    mod, _ = load_generated(MLPSpec((8, 16, 4), dtype="fp32"))
    monkeypatch.setattr(mod, "_INTERPRET", False)
    monkeypatch.setattr(mod, "_launch", lambda *a, **k: pytest.fail("kernel launched on CPU"))
    fused = mod.FusedMLP()
    x = torch.randn(5, 8)
    torch.testing.assert_close(fused(x), mod.reference(x, *weights_of(fused)))


def weights_of(fused):
    return [lin.weight for lin in fused.linears], [lin.bias for lin in fused.linears]
