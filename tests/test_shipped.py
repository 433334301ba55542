"""The modules shipped in tuned/: readable, consistent, and every kernel they can dispatch to
correct under the interpreter (bf16 ones structurally only: the interpreter's bf16 dot is wrong)."""

import math
import re

import pytest
import torch
from conftest import SHIPPED, assert_matches

from mlpgen.emit import entry, read_module
from mlpgen.measure import Measurement
from mlpgen.render import kernel_names
from mlpgen.runtime.cluster import provide
from mlpgen.selfcheck import load_module
from mlpgen.space import heuristic_config
from mlpgen.spec import KernelConfig
from mlpgen.verify import random_problem, reference


def test_something_is_shipped():
    assert SHIPPED, "tuned/ holds no generated module"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_tables_are_consistent(path, monkeypatch, tmp_path):
    monkeypatch.setenv("MLPGEN_CACHE", str(tmp_path))
    spec, tuned, provenance = read_module(path)
    assert path.stem == spec.name
    assert "default" in tuned
    mod = load_module(path)
    rendered = set(mod.KERNELS)  # provide adds each cluster kernel as the runtime renders it
    for key, table in tuned.items():
        if key != "default":  # made by one command, named with its versions and no run ids
            assert provenance[key]["measured"] > 0  # trials: None where the default budget ran
            made = (f"mlpgen --widths {spec.widths[0]},", f"mlpgen retune {spec.name}.py")
            assert provenance[key]["command"].startswith(made)
            assert {"date", "torch", "triton", "mlpgen"} <= set(provenance[key])
            assert not re.search(r"\brun\d", repr(provenance[key]))
            assert path.with_suffix(".trials.json").exists()
        for bucket, cell in table.items():
            assert bucket >= 1
            if cell["strategy"] == "torch":
                continue
            if cell["strategy"] == "epilogue":
                assert not cell["kernel"] and "epilogue" in mod._TORCH_PATHS, (key, bucket)
            elif cell["strategy"] == "cluster":  # mlpgen.runtime renders its kernel
                assert cell["kernel"] not in rendered, (key, bucket)
                provide(vars(mod), cell)
                assert mod.KERNELS[cell["kernel"]] in mod._CLUSTER_LAUNCH, (key, bucket)
            else:  # every @triton.jit function the config launches
                names = kernel_names(spec, KernelConfig.from_dict(cell))
                assert names and all(n in mod.KERNELS for n in names), (key, bucket)
            if bucket in provenance.get(key, {}).get("heuristic_default_at", ()):
                # a retired strategy's cell, now the heuristic default's (emit.read_module)
                own = {k: v for k, v in cell.items() if k not in ("train", "graph")}
                assert own == entry(heuristic_config(spec, bucket)), (key, bucket)
            elif key != "default":  # a tuned winner was timed, and never slower than eager
                cost = Measurement("ok", us=cell["us"], host_us=cell.get("host_us")).score
                eager = Measurement("ok", us=cell["eager_us"], host_us=cell.get("eager_host_us"))
                assert cost <= eager.score * 1.10, (key, bucket)  # the tuner's tie margin


@pytest.mark.interpret
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_dispatched_kernel_is_correct(path):
    spec, tuned, _ = read_module(path)
    if spec.dtype == "bf16":
        pytest.skip(
            "the interpreter's bf16 tl.dot is wrong; bf16 modules are checked on the GPU "
            "(test_gpu_kernels.py::test_shipped_winners_for_this_gpu_are_correct)"
        )
    mod = load_module(path)
    cells = {
        c["kernel"]: c
        for t in tuned.values()
        for cell in t.values()
        for c in (cell, cell.get("graph"))  # the CUDA-graph sub-cell's kernel too
        if c and c["kernel"]
    }
    m = 21  # not a multiple of any block_m
    x, weights, biases = random_problem(spec, m)
    ref = reference(spec, x, weights, biases)
    for name, cell in sorted(cells.items()):
        out = torch.full((m, spec.widths[-1]), math.nan, dtype=x.dtype)
        mod._launch(x, weights, biases, cell, out=out)
        assert_matches(out, ref, spec.dtype, name)
