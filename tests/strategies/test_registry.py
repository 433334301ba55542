"""The registry: one strategy, one file, one template, one test file, one name."""

from dataclasses import fields
from pathlib import Path

import pytest

import mlpgen.strategies
from mlpgen.render import TEMPLATE_DIR
from mlpgen.space import configs_of
from mlpgen.spec import KernelConfig, MLPSpec, SpecError
from mlpgen.strategies import STRATEGIES

PACKAGE = Path(mlpgen.strategies.__file__).parent
TESTS = Path(__file__).parent
NOT_STRATEGIES = {"__init__", "base", "defaults"}


def test_every_strategy_file_is_registered_under_its_name():
    files = {p.stem for p in PACKAGE.glob("*.py")} - NOT_STRATEGIES
    assert files == set(STRATEGIES)
    assert all(s.name == name for name, s in STRATEGIES.items())


def test_every_kernel_has_its_template_tests_and_planner():
    templates = {p.stem.removeprefix("kernel_") for p in TEMPLATE_DIR.glob("kernel_*.j2")}
    kernels = {name for name, s in STRATEGIES.items() if s.has_kernel}
    assert templates == kernels
    for name in kernels:
        assert (TESTS / f"test_{name}.py").exists(), name
        assert STRATEGIES[name].planner is not None, name


def test_domains_name_config_fields_and_kernels_carry_their_strategys_name():
    """Every domain field is a KernelConfig field; every config's kernels are named after its
    strategy, so two strategies never render one name."""
    names = {f.name for f in fields(KernelConfig)}
    spec = MLPSpec((64, 96, 32))
    for name, s in STRATEGIES.items():
        assert set(s.domain) <= names, name
        for config in configs_of(name):
            for kernel in s.kernel_names(spec, config):
                assert kernel.startswith(f"_k_{name}_"), kernel
            assert config.has_kernel == s.has_kernel and config.takes_pdl == s.takes_pdl


def test_an_unknown_strategy_names_the_registered_ones():
    with pytest.raises(SpecError, match="unknown strategy 'layered'") as e:
        KernelConfig(strategy="layered")
    assert all(name in str(e.value) for name in STRATEGIES)
