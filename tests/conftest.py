"""Test set-up. Without a GPU, Triton kernels run through its interpreter, which must be chosen
before triton is imported (MLPGEN_TEST_GPU=1 keeps the real GPU path, for `pytest -m gpu`)."""

import os
import sys
from pathlib import Path

if os.environ.get("MLPGEN_TEST_GPU") != "1":
    os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import triton  # noqa: E402,F401  (now, whichever test runs first: some unset TRITON_INTERPRET)

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"


def pytest_collection_modifyitems(config, items):
    import torch

    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU (run with MLPGEN_TEST_GPU=1 -m gpu)")
    skip_interp = pytest.mark.skip(reason="needs TRITON_INTERPRET=1")
    for item in items:
        if "gpu" in item.keywords and (INTERPRET or not torch.cuda.is_available()):
            item.add_marker(skip_gpu)
        if "interpret" in item.keywords and not INTERPRET:
            item.add_marker(skip_interp)


@pytest.fixture
def load_generated(tmp_path):
    """Write a module for a spec into tmp_path and import it; returns (module, path)."""
    from mlpgen.emit import module_path, write_module
    from mlpgen.selfcheck import load_module

    def make(spec, **kw):
        path = write_module(module_path(tmp_path, spec), spec, **kw)
        return load_module(path), path

    sys.path.insert(0, str(tmp_path))
    yield make
    sys.path.remove(str(tmp_path))


@pytest.fixture
def run_configs(load_generated):
    """run_configs(spec, configs, m, with_module=False, reuse=False): launch each config on
    NaN-poisoned output, fail on any element outside the dtype's tolerance, and return the
    relative error of each (and the module, with_module=True). reuse=True: every config twice,
    on one workspace of the configs' strategy made for m rows (a launch must leave it fit for
    the next, as mlpgen.runtime shares it between calls), returned after the module."""

    import math

    import torch

    from mlpgen.emit import entry
    from mlpgen.verify import check, random_problem, reference, rel_error

    def run(spec, configs, m, with_module=False, reuse=False):
        table = {i + 1: entry(c) for i, c in enumerate(configs)}
        mod, _ = load_generated(spec, gpu_key="test|sm0|0", table=table)
        x, weights, biases = random_problem(spec, m)
        ref = reference(spec, x, weights, biases)
        ws = mod._WORKSPACE_BUFFERS[configs[0].strategy](x, m) if reuse else None
        errors = []
        for cell in [*table.values()] * (2 if reuse else 1):
            out = torch.full((m, spec.widths[-1]), math.nan, dtype=x.dtype)
            mod._launch(x, weights, biases, cell, out=out, ws=ws)
            verdict = check(out, ref, spec.dtype)
            assert verdict.ok, f"{cell['kernel']} at M={m}: {verdict.reason}"
            errors.append(rel_error(out, ref))
        if reuse:
            return errors, mod, ws
        return (errors, mod) if with_module else errors

    return run


@pytest.fixture(scope="session")
def native_cache(tmp_path_factory):
    """One build of the native lane (~10 s) for the test run: MLPGEN_CACHE for them."""
    return str(tmp_path_factory.mktemp("mlpgen_cache"))


def assert_matches(out, ref, dtype: str, what=None) -> None:
    """`out` against the fp32 reference `ref` element by element, within mlpgen.verify's
    tolerances for `dtype` (verify.check, as the tuner verifies a kernel): one wrong element
    fails, whatever the size of the output."""
    from mlpgen.verify import check

    verdict = check(out, ref, dtype)
    assert verdict.ok, verdict.reason if what is None else f"{what}: {verdict.reason}"


ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "tuned").glob("mlp_*.py"))  # the generated modules the project ships


@pytest.fixture
def pin_domains():
    """Pin the search space to a fixed table for one test: `pin_domains(table)`. The table
    replaces space.DOMAINS in place (modules that imported the dict see it too) and the
    production table comes back afterwards, in its order. Tests of the tuner's logic use this so
    that a change of the production domains changes none of what they check."""
    from mlpgen import space

    saved = dict(space.DOMAINS)

    def pin(table: dict) -> dict:
        space.DOMAINS.clear()
        space.DOMAINS.update({s: dict(d) for s, d in table.items()})
        return space.DOMAINS

    yield pin
    space.DOMAINS.clear()
    space.DOMAINS.update(saved)


def heuristic_holders() -> list:
    """The mlpgen modules that hold heuristic_config: space and every module that imported it
    by name (tune, emit, cli, ...), so that a pinned heuristic is the one all of them call."""
    import importlib

    from mlpgen import space

    for name in ("mlpgen.tune", "mlpgen.emit", "mlpgen.cli"):
        importlib.import_module(name)
    original = space.heuristic_config
    return [
        m
        for n, m in sorted(sys.modules.items())
        if (n == "mlpgen" or n.startswith("mlpgen."))
        and getattr(m, "heuristic_config", None) is original
    ]


@pytest.fixture
def pin_heuristic(monkeypatch):
    """Pin the heuristic default for one test: `pin_heuristic(config)` (every spec and bucket)
    or `pin_heuristic(fn)` with fn(spec, m) -> KernelConfig. Tests of the tuner's logic use
    this with pin_domains, so that a change of the production heuristic (which strategy wins
    where on the H200) changes none of what they check."""
    holders = heuristic_holders()

    def pin(default):
        fn = default if callable(default) else (lambda spec, m: default)
        for module in holders:
            monkeypatch.setattr(module, "heuristic_config", fn)
        return fn

    return pin
