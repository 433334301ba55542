"""cluster: its rows take the torch path where clusters cannot run (the interpreter among them;
tests/test_gpu_kernels.py runs the kernel on an sm_90 GPU), and its feasibility rules."""

from dataclasses import replace

import pytest
import torch
from conftest import assert_matches

from mlpgen.emit import entry
from mlpgen.space import infeasible_reason, search_space
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies.cluster import plan_cluster
from mlpgen.verify import random_problem, reference

HEADLINE = MLPSpec((256, 512, 256))
H200_SHARED = 232448
KEY = "test|sm0|0"


@pytest.mark.interpret
def test_a_cluster_cell_runs_the_default_where_clusters_cannot_run(load_generated):
    """The cluster kernel's PTX (thread-block clusters, distributed shared memory) and its launch
    (shared memory past triton's own) need an sm_90 GPU and mlpgen.runtime; in the interpreter
    (and on CPU tensors, older GPUs, the public launch path) a cluster cell's rows run the
    heuristic default's cell, or the torch path where that is a cluster cell too: right,
    through FusedMLP and mlp(). (tests/test_gpu_kernels.py runs the kernel on the GPU.)"""
    spec = MLPSpec((100, 250, 70), act="silu", dtype="fp32")
    cfg = KernelConfig("cluster", block_m=16, chunk=64, block_k=128, num_warps=4)
    cell = entry(cfg)
    mod, _ = load_generated(spec, gpu_key=KEY, table={1: cell})  # its kernel is the runtime's
    x, weights, biases = random_problem(spec, 19, device="cpu")
    want = reference(spec, x, weights, biases)
    assert mod._RT is None and not mod._RUNNABLE["cluster"](x)
    fallback = mod._fallback(cell, 19, x)
    assert fallback is mod.pick_cell(mod.TUNED["default"], 19)
    assert fallback["strategy"] != "cluster"
    assert_matches(mod._launch(x, weights, biases, cell), want, "fp32")
    mod.TUNED["default"] = {1: cell}  # the interpreter runs the default table
    mod._forget_dispatch()
    assert mod._fallback(mod.config_for(19, "default"), 19, x) == {"strategy": "torch"}
    params = [p for pair in zip(weights, biases) for p in pair]
    assert_matches(mod.mlp(x, weights, biases), want, "fp32")
    fused = mod.FusedMLP()
    with torch.no_grad():
        for p, q in zip(fused.parameters(), params):
            p.copy_(q)
        assert_matches(fused(x), want, "fp32")


@pytest.mark.parametrize("block_m, block_k", [(1, 256), (16, 128)], ids=["rows", "dot"])
def test_the_runtime_renders_a_cluster_cells_kernel(
    load_generated, monkeypatch, tmp_path, block_m, block_k
):
    """A module carries no cluster kernel or hand-over helper: mlpgen.runtime.cluster adds a
    cluster cell's kernel (rendered by its template, with the helpers it calls, into a cache
    file) to KERNELS and its launch to _CLUSTER_LAUNCH, once. The row form has its tiles
    written in; the dot form takes them as constexprs."""
    import inspect

    from mlpgen.render import shared_kernels
    from mlpgen.runtime.cluster import provide

    monkeypatch.setenv("MLPGEN_CACHE", str(tmp_path / "cache"))
    spec = MLPSpec((256, 512, 256), act="gelu", dtype="fp16")
    cfg = KernelConfig("cluster", block_m=block_m, chunk=32, block_k=block_k, num_warps=4)
    cell = entry(cfg)
    mod, path = load_generated(spec, gpu_key=KEY, table={1: cell})
    text = path.read_text()
    assert "def _k_cluster" not in text and "_cluster_store" not in text
    assert cfg.kernel_name not in mod.KERNELS and mod._CLUSTER_LAUNCH == {}
    provide(vars(mod), cell)
    kernel = mod.KERNELS[cfg.kernel_name]
    function, tiles = kernel
    (source,), table = shared_kernels(spec, [cfg])
    assert inspect.getsource(function.fn).strip() == source.strip()
    assert (function.fn.__name__, tiles) == table[cfg.kernel_name]
    assert callable(function.fn.__globals__["_cluster_store"])  # the helpers beside it
    plan = plan_cluster(spec, cfg)
    assert mod._CLUSTER_LAUNCH == {kernel: (plan.ctas, plan.buffer_bytes)}
    provide(vars(mod), cell)  # once: the same entry
    assert mod.KERNELS[cfg.kernel_name] is kernel and len(mod._CLUSTER_LAUNCH) == 1
    assert len(list((tmp_path / "cache" / "cluster").glob("*.py"))) == 1


def test_candidates_only_where_the_gpu_launches_clusters():
    """cluster configs are searched only when the tuner says the GPU launches thread-block
    clusters (sm_90+; CPU interpretation never does), in buckets up to 256 rows; everywhere
    else they are dropped with a reason."""
    for bucket in (1, 64, 256):
        off = search_space(HEADLINE, bucket, H200_SHARED)
        on = search_space(HEADLINE, bucket, H200_SHARED, clusters=True)
        cluster = {c for c in on.candidates if c.strategy == "cluster"}
        # 16 rows: chunks 32, 64 (16 and 8 CTAs a cluster) x k steps 128, 256 x 2, 4 warps;
        # one row the same but 64-column chunks with 2 warps (registers); 32 rows the same 8
        # as 16 rows, over 16 rows only (a taller tile is dominated)
        assert {c.block_m for c in cluster} == ({1, 16} if bucket < 32 else {1, 16, 32})
        assert len(cluster) == (14 if bucket < 32 else 22)
        one_rows = {(c.chunk, c.num_warps) for c in cluster if c.block_m == 1}
        assert one_rows == {(32, 2), (32, 4), (64, 4)}
        assert not any(c.strategy == "cluster" for c in off.candidates)
        assert off.dropped_counts()["no clusters"] == 22
        assert set(on.candidates) - cluster == set(off.candidates)
    big = search_space(HEADLINE, 1024, H200_SHARED, clusters=True)
    assert not any(c.strategy == "cluster" for c in big.candidates)


def test_feasibility():
    """Two layers, a power-of-two number of hidden chunks up to 16 (one CTA each), partial
    outputs that fit the registers, a receive buffer that fits the shared memory beside
    triton's."""
    cfg = KernelConfig("cluster", block_m=16, chunk=32, block_k=128, num_warps=4)
    assert infeasible_reason(HEADLINE, cfg) is None
    assert infeasible_reason(MLPSpec((100, 250, 70)), cfg) is None  # 8 CTAs, masked widths
    assert "2 layers" in infeasible_reason(MLPSpec((256, 512, 512, 256)), cfg)
    assert "10 hidden chunks" in infeasible_reason(MLPSpec((256, 300, 256)), cfg)
    assert "32 hidden chunks" in infeasible_reason(MLPSpec((256, 1024, 256)), cfg)
    assert "1 hidden chunks" in infeasible_reason(MLPSpec((256, 32, 256)), cfg)
    assert "registers" in infeasible_reason(MLPSpec((256, 512, 4096)), cfg)
    # 16 CTAs x 16 rows x 64 owned columns of fp32: a 64 KiB buffer, beside triton's operand
    # tiles more than 99 KiB, which the H200 launches (opted in)
    wide = MLPSpec((256, 512, 1024))
    assert plan_cluster(wide, cfg).buffer_bytes == 64 * 1024
    assert "shared memory" in infeasible_reason(wide, cfg)
    assert infeasible_reason(wide, cfg, H200_SHARED) is None
    # rows one by one on the CUDA cores: a buffer of a sixteenth at one row, x and both weight
    # tiles held at once in registers
    row = KernelConfig("cluster", block_m=1, chunk=32, block_k=256, num_warps=4)
    assert plan_cluster(HEADLINE, row).fma and not plan_cluster(HEADLINE, cfg).fma
    assert plan_cluster(wide, row).buffer_bytes == 16 * 1 * 64 * 4
    # a 1024 x 32 second-layer tile fits 4 warps (254 registers, offline sm_90a compile), not 2;
    # 1024 x 64 fits neither
    assert infeasible_reason(wide, row) is None
    assert "registers" in infeasible_reason(wide, replace(row, num_warps=2))
    assert "registers" in infeasible_reason(wide, replace(row, chunk=64))
    # one row widens its weight tiles as it uses them; more rows keep one widened for all rows
    assert infeasible_reason(HEADLINE, replace(row, chunk=64)) is None
    for rows in (1, 2, 4, 8):
        assert infeasible_reason(HEADLINE, replace(row, block_m=rows)) is None
        if rows > 1:
            assert "registers" in infeasible_reason(HEADLINE, replace(row, block_m=rows, chunk=64))
    assert plan_cluster(HEADLINE, replace(row, block_k=64)).k_starts == (0, 64, 128, 192)
