"""The generated module on a real GPU: correct in every dtype at small, odd and large M."""

import math

import pytest
import torch

from mlpgen.emit import entry
from mlpgen.space import heuristic_config
from mlpgen.spec import MLPSpec
from mlpgen.verify import TOLERANCE, random_problem, reference, rel_error

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("m", [1, 1000, 65536])
def test_headline_spec_default_config(load_generated, dtype, m):
    spec = MLPSpec((256, 512, 256), act="gelu", dtype=dtype)
    mod, _ = load_generated(spec)
    x, weights, biases = random_problem(spec, m, device="cuda")
    y = mod.mlp(x, weights, biases)  # the default table: this GPU is not tuned in a fresh module
    assert rel_error(y, reference(spec, x, weights, biases)) <= TOLERANCE[dtype]


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp32"])
def test_odd_depth4_spec_every_bucket_config(load_generated, dtype):
    spec = MLPSpec((100, 300, 200, 7), act="silu", dtype=dtype)
    mod, _ = load_generated(spec)
    for m in (1, 37, 1000, 4099):
        x, weights, biases = random_problem(spec, m, device="cuda")
        cell = entry(heuristic_config(spec, m))
        out = torch.full((m, 7), math.nan, device="cuda", dtype=x.dtype)
        mod._launch(x, weights, biases, cell, out=out)
        assert rel_error(out, reference(spec, x, weights, biases)) <= TOLERANCE[dtype], m
