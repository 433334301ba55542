"""A generated module is one file that works alone: copied into an empty folder, with mlpgen not
importable, it imports torch, triton and the standard library only, runs its torch path and its
kernels (under the interpreter) element-wise close to an fp32 reference, trains through the
torch backward with the fp32 step's gradients, adopts an nn.Sequential
(and refuses one that computes something else), and its __main__
self-check passes. The rules it shares with mlpgen are copies of mlpgen.dispatch's."""

import ast
import inspect
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import SHIPPED

from mlpgen import dispatch
from mlpgen.emit import module_path, write_module
from mlpgen.spec import MLPSpec

ODD = MLPSpec((37, 100, 10), act="gelu", dtype="fp32")  # odd widths; M = 37 fits no tile
STDLIB = set(sys.stdlib_module_names)

RUN = textwrap.dedent(
    """
    import json, sys
    sys.modules["mlpgen"] = None  # as where mlpgen is not installed
    sys.path.insert(0, sys.argv[1])
    import torch
    mod = __import__(sys.argv[2])
    torch.manual_seed(0)
    x = torch.randn(37, mod.WIDTHS[0], dtype=mod.DTYPE)
    fused = mod.FusedMLP()
    with torch.no_grad():
        y = fused(x).float()
        w = [lin.weight.float() for lin in fused.linears]
        b = [lin.bias.float() for lin in fused.linears] if mod.BIAS else None
        want = mod.reference(x.float(), w, b)
    close = torch.isclose(y, want, rtol=1e-3, atol=1e-3 * want.abs().max().item())
    back = mod.FusedMLP.from_module(fused.to_module())  # adoption of an nn.Sequential
    adopted = all(torch.equal(a, b) for a, b in zip(back.parameters(), fused.parameters()))
    try:
        mod.FusedMLP.from_module(torch.nn.Sequential(*list(fused.to_module())[:-1]))
    except ValueError:
        refused = True
    else:
        refused = False
    # a training step through the torch backward against the same step in fp32
    xg = x.clone().requires_grad_()
    fused(xg).float().square().mean().backward()
    seq, x32 = fused.to_module().float(), x.float().requires_grad_()
    seq(x32).square().mean().backward()
    got = [xg.grad] + [p.grad for p in fused.parameters()]
    want = [x32.grad] + [p.grad for p in seq.parameters()]
    trained = all(
        torch.allclose(g.float(), w, rtol=1e-3, atol=1e-3 * w.abs().max().item())
        for g, w in zip(got, want)
    )
    training = mod._mlpgen("mlpgen.runtime.train")
    print(json.dumps({"trained": trained, "training": training is not None,
                      "close": bool(close.all()), "shape": list(y.shape), "slow": mod._SLOW,
                      "runtime": mod._RT is not None, "path": mod._INTERPRET,
                      "adopted": adopted, "refused": refused}))
    """
)


def alone(tmp_path, source) -> str:
    """A copy of the module at `source` in an empty folder: that folder."""
    folder = tmp_path / "alone"
    folder.mkdir()
    shutil.copy(source, folder)
    return str(folder)


def run_alone(folder, name, interpret: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", RUN, folder, name],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def imports_of(path) -> set[str]:
    tree = ast.parse(open(path).read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.fixture(scope="module")
def odd_module(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gen")
    return write_module(module_path(folder, ODD), ODD)


@pytest.mark.parametrize("interpret", [False, True], ids=["torch path", "kernel"])
def test_a_module_copied_alone_runs(odd_module, tmp_path, interpret):
    got = run_alone(alone(tmp_path, odd_module), ODD.name, interpret)
    assert got["close"] and got["shape"] == [37, 10]
    assert got["trained"] and not got["training"]  # the torch backward, without mlpgen
    assert got["adopted"] and got["refused"]  # from_module(nn.Sequential) needs no mlpgen
    assert not got["runtime"] and got["slow"] == "mlpgen is not installed (pip install mlpgen)"
    assert got["path"] == interpret


@pytest.mark.parametrize("path", [*SHIPPED, "odd"], ids=lambda p: getattr(p, "stem", p))
def test_a_module_imports_torch_triton_and_the_standard_library_only(odd_module, path):
    path = odd_module if path == "odd" else path
    others = {n for n in imports_of(path) if n not in STDLIB} - {"torch", "triton", "__future__"}
    assert others == set()  # mlpgen only by name, in _mlpgen, guarded by ImportError
    text = open(path).read()
    assert "importlib.import_module(module)" in text and "except ImportError:" in text
    assert '_mlpgen("mlpgen.runtime")' in text


def test_the_self_check_runs_as_a_script(odd_module, tmp_path):
    folder = alone(tmp_path, odd_module)
    env = dict(os.environ, TRITON_INTERPRET="1")
    done = subprocess.run(
        [sys.executable, os.path.join(folder, odd_module.name)],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    line = done.stdout.strip().splitlines()[-1]
    assert line.startswith(f"{ODD.name} on cpu: worst element at") and line.endswith(": ok")
    ratio = float(line.split("worst element at ")[1].split("x")[0])
    assert 0 <= ratio <= 1


def function_sources(path) -> dict[str, str]:
    text = open(path).read()
    tree = ast.parse(text)
    return {
        node.name: ast.get_source_segment(text, node)
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }


@pytest.mark.parametrize("path", [*SHIPPED, "odd"], ids=lambda p: getattr(p, "stem", p))
def test_the_modules_rules_are_mlpgen_dispatchs(odd_module, path):
    """GPU key, bucket choice and cell pick are defined once (mlpgen.dispatch) and copied."""
    found = function_sources(odd_module if path == "odd" else path)
    for rule in dispatch.RENDERED:
        assert found[rule.__name__] == inspect.getsource(rule).strip("\n"), rule.__name__


def test_the_rules():
    assert dispatch.gpu_key_of("NVIDIA H200", 9, 0, 132) == "NVIDIA H200|sm90|132"
    buckets = [1, 16, 64, 256]
    assert [dispatch.nearest_bucket(buckets, m) for m in (1, 4, 5, 31, 33, 10**6)] == [
        1, 1, 16, 16, 64, 256,
    ]  # fmt: skip
    cell = {"strategy": "stream", "graph": {"strategy": "split"}}
    table = {1: {"strategy": "torch"}, 64: cell}
    assert dispatch.pick_cell(table, 50) is cell
    assert dispatch.pick_cell(table, 50, graph=True) == {"strategy": "split"}
    assert dispatch.pick_cell(table, 1, graph=True) == {"strategy": "torch"}
