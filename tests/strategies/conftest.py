"""Shared set-up of the per-strategy tests: each kernel runs through a generated module under
Triton's interpreter against the fp32 reference, on NaN-poisoned output."""

import math

import pytest
import torch

from mlpgen.emit import entry
from mlpgen.verify import random_problem, reference, rel_error

KEY = "test|sm0|0"


@pytest.fixture
def run_configs(load_generated):
    """run_configs(spec, configs, m, with_module=False): launch each config on NaN-poisoned
    output and return the relative error of each (and the module, with_module=True)."""

    def run(spec, configs, m, with_module=False):
        table = {i + 1: entry(c) for i, c in enumerate(configs)}
        mod, _ = load_generated(spec, gpu_key=KEY, table=table)
        x, weights, biases = random_problem(spec, m)
        ref = reference(spec, x, weights, biases)
        errors = []
        for cell in table.values():
            out = torch.full((m, spec.widths[-1]), math.nan, dtype=x.dtype)
            mod._launch(x, weights, biases, cell, out=out)
            errors.append(rel_error(out, ref))
        return (errors, mod) if with_module else errors

    return run
