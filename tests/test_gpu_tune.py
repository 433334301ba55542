"""The tuner on a real GPU: candidates measured in worker processes, an illegal memory access
costing one candidate, and `mlpgen retune` end to end on a small spec."""

import json
import math
import re

import pytest
import torch
import triton
import triton.language as tl
from conftest import assert_matches

from mlpgen.cli import main
from mlpgen.emit import read_module, write_module
from mlpgen.measure import (
    HIDDEN_WEIGHT,
    HOST_BUCKET_MAX,
    Measurement,
    candidate_module,
    hot_path,
    measure_candidate,
)
from mlpgen.selfcheck import load_module
from mlpgen.space import heuristic_config
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.trial_log import trial_log_path
from mlpgen.tune import gpu_key
from mlpgen.verify import random_problem, reference
from mlpgen.workers import WorkerMeasure

pytestmark = pytest.mark.gpu

HEADLINE = MLPSpec((256, 512, 256))
TORCH = KernelConfig(strategy="torch")


@triton.jit
def _scribble(p):
    tl.store(p + (1 << 40), 1.0)  # far outside any allocation: an illegal address


def crashing_measure(spec, bucket, config, *rest):
    """Runs in the worker: block_m 128 takes the CUDA context down, the rest is measured."""
    if config.block_m == 128:
        _scribble[(1,)](torch.empty(1, device="cuda"))
        torch.cuda.synchronize()
    return measure_candidate(spec, bucket, config, *rest)


def test_real_candidates_are_verified_and_timed(tmp_path):
    m = WorkerMeasure(HEADLINE, str(tmp_path), limit_s=120)
    try:
        for bucket in (1, 4096, 2 * HOST_BUCKET_MAX):
            # over 2048 rows the default is the torch path itself: time the fused one of 2048
            fused = m(bucket, heuristic_config(HEADLINE, min(bucket, 2048)))
            eager = m(bucket, TORCH)
            for r in (fused, eager):
                assert r.ok, r
                assert 0 < r.us < 1e4 and r.err <= 1
                assert (r.host_us is not None) == (bucket <= HOST_BUCKET_MAX)
    finally:
        m.close()


def test_host_time_is_what_host_fed_calls_take(tmp_path):
    """Calls fed by the host (eager's several launches, persist's one) take at least their GPU
    time each; a bucket past HOST_BUCKET_MAX has no host time."""
    persist = KernelConfig("persist", block_m=64, block_n=64, block_k=64, num_stages=3)
    m = WorkerMeasure(HEADLINE, str(tmp_path), limit_s=120)
    try:
        several, one = m(1024, TORCH), m(1024, persist)
        assert several.ok and one.ok, (several, one)
        for r in (several, one):
            assert r.host_us >= 0.9 * r.us
            assert r.score == max(r.us, r.host_us) + HIDDEN_WEIGHT * min(r.us, r.host_us)
        assert m(2 * HOST_BUCKET_MAX, persist).host_us is None
    finally:
        m.close()


def test_an_illegal_memory_access_costs_one_candidate(tmp_path):
    m = WorkerMeasure(HEADLINE, str(tmp_path), limit_s=120, fn=crashing_measure)
    try:
        bad = m(64, KernelConfig(block_m=128, chunk=64, num_warps=8))
        assert bad.verdict in ("error", "crash") and not bad.ok, bad
        good = m(64, heuristic_config(HEADLINE, 64))
        assert good.ok and m.worker.restarts == 1, good
    finally:
        m.close()


def test_num_stages_does_not_change_the_rowblock_kernel(tmp_path):
    """Why space.DOMAINS pins rowblock's num_stages to 1: the kernel has no loop to pipeline.
    If this fails, a template grew a loop and the domain should be widened."""
    config = KernelConfig(block_m=32, chunk=64, num_warps=4)
    mod = candidate_module(HEADLINE, config, tmp_path)
    x, weights, biases = random_problem(HEADLINE, 1, device="cuda")
    args = [x, torch.empty(1, 256, device="cuda", dtype=x.dtype)]
    for w, b in zip(weights, biases):
        args += [w, b]
    kernel, tiles = mod.KERNELS[config.kernel_name]
    ptx = [
        kernel.warmup(*args, 1, *tiles, grid=(1,), num_warps=4, num_stages=s).asm["ptx"]
        for s in (1, 3)
    ]
    # the debug info names the source file: a cached compile of the same source from another
    # path (an earlier tune in the same process) differs there only
    ptx = [re.sub(r'\.file\s+\d+\s+"[^"]*"', ".file", p) for p in ptx]
    assert ptx[0] == ptx[1]


@pytest.mark.skipif(
    not triton.__version__.startswith("3.6."), reason="the native lane repeats triton 3.6's launch"
)
def test_each_timed_config_launches_its_own_kernel(tmp_path, monkeypatch):
    """The tuner times configs that differ only in warps one after another on one candidate
    module (one kernel source), through the module's calls: each call must launch the kernel
    compiled for the config being timed, not the one a lane opened for an earlier config."""
    monkeypatch.setenv("MLPGEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("MLPGEN_NATIVE", raising=False)
    x, weights, biases = random_problem(HEADLINE, 37, device="cuda")
    want = reference(HEADLINE, x, weights, biases)
    for warps in (4, 8, 4):
        config = KernelConfig(
            strategy="split", block_m=16, chunk=32, block_n=256, block_k=128, num_warps=warps
        )
        mod = candidate_module(HEADLINE, config, tmp_path)
        with torch.no_grad():
            call = hot_path(mod, config, x, weights, biases)
            assert_matches(call(), want, "fp16")
        from mlpgen.runtime import native

        lane = native.build()
        assert lane is not None and lane.lanes(mod._RT.native[1]) == [(0, 37, 32 * warps, 1, 1)]


def test_retune_end_to_end_writes_verified_winners(tmp_path, capsys):
    spec = MLPSpec((64, 128, 64), act="gelu", dtype="fp16")
    path = write_module(tmp_path / f"{spec.name}.py", spec)
    storage = f"sqlite:///{tmp_path / 'studies.db'}"
    argv = ["retune", str(path), "--batches", "1,4096", "--trials", "5", "--storage", storage]
    assert main([*argv, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    key = gpu_key(0)
    assert summary["gpu"] == key
    _, tuned, prov = read_module(path)
    assert sorted(tuned[key]) == [1, 4096] and prov[key]["trials"] == 5
    mod = load_module(path)
    assert mod.gpu_key() == key  # what the module computes is what the tuner wrote
    for bucket, cell in tuned[key].items():
        assert cell["us"] > 0 and cell["eager_us"] > 0
        x, weights, biases = random_problem(spec, bucket + 3, device="cuda")
        y = mod.mlp(x, weights, biases)
        assert_matches(y, reference(spec, x, weights, biases), "fp16")
    log = json.loads(trial_log_path(path).read_text())
    trials = log["gpus"][key]["buckets"]["4096"]["trials"]
    assert len([t for t in trials if "verdict" in t and t["state"] != "pdl"]) == 5
    linked = [t for t in trials if t["state"] == "pdl"]  # the PDL pass, on sm_90 and up
    assert bool(linked) == (torch.cuda.get_device_capability() >= (9, 0))
    assert all(t["config"]["pdl"] for t in linked)
    assert all(math.isfinite(t["us"]) for t in trials if t.get("verdict") == "ok")
    # a second run on the same storage resumes: nothing left to measure, same winners
    assert main(argv) == 0
    assert read_module(path)[1][key] == tuned[key]


def test_measurement_of_a_wide_spec_is_the_torch_path(tmp_path):
    spec = MLPSpec((2048, 64))
    m = WorkerMeasure(spec, str(tmp_path), limit_s=120)
    try:
        r = m(16, TORCH)
        assert isinstance(r, Measurement) and r.ok and r.err <= 1
    finally:
        m.close()
