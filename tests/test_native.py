"""mlpgen.runtime's native lane on the CPU: its C++ (a file of the package) builds against this
torch and loads, keeps its lanes, declines what is not a CUDA call, and modules stay usable when
it cannot be built. (Its launches are GPU facts: tests/test_gpu_module.py.)"""

import shutil
import types
import warnings

import pytest
import torch
import triton
from conftest import assert_matches

from mlpgen.runtime import native
from mlpgen.runtime.lanes import ModuleRuntime
from mlpgen.spec import MLPSpec

SPEC = MLPSpec((8, 12, 5), act="gelu", dtype="fp32")
NUMELS, ROWS = [96, 12, 60, 5], [12, 0, 5, 0]  # w0, b0, w1, b1: a weight's rows, 0 for a bias
needs_compiler = pytest.mark.skipif(shutil.which("c++") is None, reason="no C++ compiler (c++)")


@pytest.fixture
def fresh(monkeypatch, native_cache):
    """The native lane as on a triton it supports, built (or found) in the test run's cache."""
    monkeypatch.setenv("MLPGEN_CACHE", native_cache)
    monkeypatch.delenv("MLPGEN_NATIVE", raising=False)
    monkeypatch.setattr(triton, "__version__", "3.6.0")
    monkeypatch.setattr(native, "_BUILT", {})


@needs_compiler
def test_builds_once_and_keeps_lanes(fresh, native_cache, monkeypatch):
    lane = native.build()
    assert lane is not None and lane.__file__.startswith(native_cache)
    assert native.SOURCE.name == "native_lane.cpp" and native.SOURCE.is_file()
    state = lane.state(torch.empty(0), 8, 5, NUMELS, ROWS, False)
    assert lane.lanes(state) == []
    with pytest.raises(ValueError, match="one entry a parameter"):
        lane.state(torch.empty(0), 8, 5, NUMELS, ROWS[:2], False)
    x, params = (
        torch.randn(3, 8),
        [torch.randn(12, 8), torch.randn(12), torch.randn(5, 12), torch.randn(5)],
    )
    args = ([-2, -3, 0, 1, 2, 3, -1], [0, 0, 0, 0, 0, 0, 3], [])
    native_ = lane
    native_.add(state, 0, 3, 0, 1, 1, 4, 0, 1, False, False, *args)
    native_.add(state, 0, 7, 0, 1, 1, 4, 0, 1, False, False, *args)
    native_.add(state, 0, 3, 0, 2, 1, 8, 0, 1, False, False, *args)  # replaces (0, 3)
    native_.add(state, 0, 9, 0, 1, 1, 4, 0, 8, False, False, *args)  # clusters of 8 CTAs
    assert native_.lanes(state) == [(0, 3, 256, 1, 1), (0, 7, 128, 1, 1), (0, 9, 128, 8, 1)]
    assert not hasattr(native_, "extend")  # a lane's later steps are cuBLASLt GEMMs only
    # epilogue: cuBLASLt GEMM steps (their success is a GPU fact: cuBLASLt, a CUDA
    # workspace); everything a step's registration checks refused here, the lane as it was
    ws = torch.empty(64, dtype=torch.uint8)

    def gemm(extend=True, m=7, k=12, n=5, source=-1, sink=-3, weight=2, bias=3, epilogue=4, w=ws):
        native_.gemm(
            state, extend, 0, m, k, n, source, 4096, sink, 0, weight, bias, epilogue, w, ()
        )

    with pytest.raises(KeyError, match="no lane to extend"):
        gemm(m=11)
    for weight, bias in ((4, 3), (2, -2), (-1, 3)):
        with pytest.raises(ValueError, match="names no parameter"):
            gemm(weight=weight, bias=bias)
    for k, bias in ((8, 3), (12, 2)):  # w1 is 5 x 12, b1 has 5
        with pytest.raises(ValueError, match=r"not \[n, k\] and \[n\]"):
            gemm(k=k, bias=bias)
    for source, sink in ((-3, -3), (0, -3), (-1, -2)):
        with pytest.raises(ValueError, match="reads x or a buffer and writes y or a buffer"):
            gemm(source=source, sink=sink)
    for epilogue, bias in ((3, 3), (4, -1), (1, 3), (36, -1)):  # 3 is none; BIAS needs a bias
        with pytest.raises(ValueError, match="epilogue of cuBLASLt's"):
            gemm(epilogue=epilogue, bias=bias)
    with pytest.raises(TypeError, match="workspace must be a tensor"):
        gemm(w="w")
    with pytest.raises(ValueError, match="not a CUDA tensor"):
        gemm()  # a CPU workspace
    assert native_.lanes(state)[1] == (0, 7, 128, 1, 1)
    native_.remove(state, 0, 7)
    native_.remove(state, 0, 11)  # none: nothing to do
    assert [lane[1] for lane in native_.lanes(state)] == [3, 9]
    with pytest.raises(ValueError, match="at least 1"):
        native_.add(state, 0, 5, 0, 1, 1, 4, 0, 0, False, False, *args)
    assert native_.call(state, x, params, None) is None  # a CPU tensor: not the lane's call
    assert native_.call(state, "x", params, None) is None
    with pytest.raises(ValueError, match="names no argument"):
        native_.add(state, 0, 5, 0, 1, 1, 4, 0, 1, False, False, [-2, -3, 4], [0, 0, 0], [])
    with pytest.raises(ValueError, match="differ in length"):
        native_.add(state, 0, 5, 0, 1, 1, 4, 0, 1, False, False, [-2, -3], [0], [])
    with pytest.raises(TypeError):
        native_.call(state, x)
    # another process (here: a forgotten build) loads the same file: nothing compiles again
    monkeypatch.setattr(native, "_BUILT", {})
    monkeypatch.setattr(native, "subprocess", types.SimpleNamespace(run=None))  # would fail
    assert native.build().__file__ == native_.__file__


@needs_compiler
def test_the_tuners_hot_path_forgets_earlier_lanes(fresh, load_generated, monkeypatch):
    """measure.hot_path times config after config on one candidate module (a kernel's warps and
    stages variants share it), each through the module's calls: the native lanes of the earlier
    configs must go, or they take the calls and launch their own kernels (and every variant of
    a kernel would be timed as the first one timed). Whether calls check for a CUDA-graph
    capture follows the new table too."""
    from mlpgen.emit import entry
    from mlpgen.measure import hot_path
    from mlpgen.space import heuristic_config
    from mlpgen.verify import random_problem, reference

    module = load_generated(SPEC)[0]
    rt = ModuleRuntime(vars(module))
    monkeypatch.setattr(module, "_RT", rt)
    lane = native.build()
    rt.native[:] = [lane.call, lane.state(torch.empty(0), 8, 5, NUMELS, ROWS, False)]
    config = heuristic_config(SPEC, 3)
    x, w, b = random_problem(SPEC, 3)
    call = hot_path(module, config, x, w, b)
    assert rt.native == [None, None]
    assert_matches(call(), reference(SPEC, x, w, b), "fp32")
    assert not module._GRAPH_CELLS
    cell = entry(config)
    module.TUNED = {"default": {1: cell | {"graph": cell}}}
    module._forget_dispatch()
    assert module._GRAPH_CELLS


def test_off_unsupported_and_unbuildable_leave_the_python_lane(
    fresh, load_generated, monkeypatch, tmp_path
):
    monkeypatch.setenv("MLPGEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MLPGEN_NATIVE", "0")
    assert native.build() is None and not (tmp_path / "cache").exists()
    monkeypatch.setattr(native, "_BUILT", {})
    monkeypatch.setenv("MLPGEN_NATIVE", "1")
    monkeypatch.setattr(triton, "__version__", "3.99.0")  # a C launch it does not know
    assert native.build() is None and not (tmp_path / "cache").exists()
    monkeypatch.setattr(native, "_BUILT", {})
    monkeypatch.setattr(triton, "__version__", "3.6.0")
    monkeypatch.setenv("CXX", "false")  # a compiler that fails
    with pytest.warns(UserWarning, match="native lane could not be built.*MLPGEN_NATIVE=0"):
        assert native.build() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert native.build() is None  # one warning, no second build
    mod = load_generated(MLPSpec((8, 6), act="relu", dtype="fp32"))[0]
    assert list((tmp_path / "cache" / "native").iterdir()) == []  # no half-written file
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    fused = mod.FusedMLP()
    torch.testing.assert_close(fused(x), fused.to_module()(x))  # fp32's rtol and atol


def test_arguments_follow_the_compiled_signature():
    """What native_lane.cpp's add is given: the kernel's arguments that triton did not
    specialise to constants, each the input, output, a parameter or a fixed integer."""
    n = 6  # x, y, w0, b0, w1, b1
    roles = (-2, -3, 0, 1, 2, 3)
    ptr = "*fp32"

    def compiled(*kinds):
        return types.SimpleNamespace(src=types.SimpleNamespace(signature=dict(enumerate(kinds))))

    args = [0] * n + [37, 4096]
    kinds = [ptr] * n + ["i32", "*i32"]
    assert native.arguments(compiled(*kinds), args, roles) == (
        [-2, -3, 0, 1, 2, 3, -1, -1],
        [0, 0, 0, 0, 0, 0, 37, 4096],
    )
    kinds[3] = kinds[-2] = "constexpr"  # b0 and M specialised away
    assert native.arguments(compiled(*kinds), args, roles) == (
        [-2, -3, 0, 2, 3, -1],
        [0] * 5 + [4096],
    )
    assert native.arguments(compiled(*kinds[:-1]), args, roles) is None  # a count that differs
    kinds[-2] = "fp32"  # a float argument: the Python lane's
    assert native.arguments(compiled(*kinds), args, roles) is None
    assert native.arguments(types.SimpleNamespace(), args, roles) is None  # no signature
