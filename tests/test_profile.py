"""`mlpgen profile`: the trace statistics on synthetic traces, the command on the CPU (torch
path) with its table, Chrome trace and report; on a GPU (gpu-marked) the kernel counts."""

import json
from pathlib import Path

import pytest
import torch

from mlpgen import profile
from mlpgen.cli import main
from mlpgen.emit import module_path, write_module
from mlpgen.spec import MLPSpec

FIXTURE = Path(__file__).parent / "fixtures" / "bench_synthetic.json"


def ev(name, cat, ts, dur, tid=1, pid=1):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid}


def synthetic_trace():
    """Two forwards of eager (3 kernels each) then two of mlpgen (1 kernel each), as Kineto
    exports them: CPU ranges and ops on pid 1, kernels on the GPU's pid 0, metadata around."""
    cpu = [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python"}},
        ev("warm-up", "user_annotation", 0, 5),
        ev("eager", "user_annotation", 10, 100),
        ev("eager.forward", "user_annotation", 10, 30),
        ev("aten::linear", "cpu_op", 11, 10),
        ev("aten::addmm", "cpu_op", 12, 8),  # nested in linear: not a top-level op
        ev("aten::gelu", "cpu_op", 22, 5),
        ev("aten::linear", "cpu_op", 28, 10),
        ev("eager.forward", "user_annotation", 40, 20),
        ev("aten::linear", "cpu_op", 41, 6),
        ev("aten::gelu", "cpu_op", 48, 3),
        ev("aten::linear", "cpu_op", 52, 6),
        ev("cudaLaunchKernel", "cuda_runtime", 13, 2),
        ev("mlpgen", "user_annotation", 120, 40),
        ev("mlpgen.forward", "user_annotation", 120, 10),
        ev("aten::empty", "cpu_op", 121, 1),
        ev("mlpgen.forward", "user_annotation", 131, 12),
        ev("aten::empty", "cpu_op", 132, 1),
        ev("aten::empty", "cpu_op", 140, 1, tid=2),  # another thread: its own nesting
    ]
    gpu = [
        ev("eager", "gpu_user_annotation", 15, 80, pid=0),
        ev("warmup_kernel", "kernel", 2, 2, pid=0),  # before any run: not counted
        ev("gemm_a", "kernel", 20, 10, pid=0),
        ev("gelu_k", "kernel", 35, 2, pid=0),
        ev("gemm_b", "kernel", 40, 8, pid=0),
        ev("gemm_a", "kernel", 60, 10, pid=0),
        ev("gelu_k", "kernel", 75, 2, pid=0),
        ev("gemm_b", "kernel", 76, 8, pid=0),  # overlaps the gelu: busy counted once
        ev("Memset", "gpu_memset", 112, 2, pid=0),  # after eager's range, before mlpgen's
        ev("fused", "kernel", 125, 4, pid=0),
        ev("fused", "kernel", 135, 6, pid=0),
    ]
    return cpu + gpu


def test_merge_intervals_and_idle_gaps():
    assert profile.merge_intervals([(5, 7), (0, 2), (1, 3), (3, 4)]) == [(0, 4), (5, 7)]
    kernels = [ev("a", "kernel", 0, 10), ev("b", "kernel", 15, 5), ev("c", "kernel", 18, 10)]
    assert profile.idle_gaps(kernels) == [5]
    assert profile.busy_us(kernels) == 23
    assert profile.idle_gaps([]) == [] and profile.busy_us([]) == 0


def test_top_level_ops_skip_nested_ones_per_thread():
    events = [
        ev("aten::linear", "cpu_op", 0, 10),
        ev("aten::addmm", "cpu_op", 1, 8),
        ev("aten::mm", "cpu_op", 2, 1),
        ev("aten::gelu", "cpu_op", 10, 2),
        ev("aten::copy_", "cpu_op", 3, 1, tid=9),
        ev("eager", "user_annotation", 0, 20),
    ]
    names = [e["name"] for e in profile.top_level_ops(events)]
    assert names == ["aten::linear", "aten::copy_", "aten::gelu"]


def test_kernel_counting_and_idle_time_on_a_synthetic_trace():
    events = synthetic_trace()
    assert len(profile.kernels(events)) == 9
    stats = profile.analyse(events, forwards=2)
    eager, mlpgen = stats["eager"], stats["mlpgen"]
    assert eager["kernels_per_forward"] == 3
    assert mlpgen["kernels_per_forward"] == 1
    # eager GPU work: [20,30] [35,37] [40,48] [60,70] [75,84] and the memset [112,114]
    assert eager["gpu_us_per_forward"] == pytest.approx((10 + 2 + 8 + 10 + 9 + 2) / 2)
    assert eager["gpu_idle_us_per_forward"] == pytest.approx((5 + 3 + 12 + 5 + 28) / 2)
    assert mlpgen["gpu_us_per_forward"] == 5 and mlpgen["gpu_idle_us_per_forward"] == 3
    assert eager["cpu_us_per_call"] == 25  # median of the forward ranges 30, 20
    assert eager["wall_us_per_forward"] == 50
    assert eager["ops_per_forward"] == 3  # linear, gelu, linear; addmm is inside linear
    assert mlpgen["ops_per_forward"] == 1.5
    assert eager["top_kind"] == "kernels"
    assert eager["top"][0] == {"name": "gemm_a", "calls_per_forward": 1, "us_per_forward": 10}
    assert [t["name"] for t in eager["top"]] == ["gemm_a", "gemm_b", "gelu_k"]


def test_cpu_only_trace_reports_torch_ops():
    events = [e for e in synthetic_trace() if e.get("pid") != 0]
    stats = profile.analyse(events, forwards=2)
    assert stats["eager"]["kernels_per_forward"] is None
    assert stats["eager"]["gpu_us_per_forward"] is None
    assert stats["eager"]["top_kind"] == "torch ops"
    assert stats["eager"]["top"][0]["name"] == "aten::linear"
    assert stats["eager"]["top"][0]["calls_per_forward"] == 2


def test_run_windows_follow_the_labelled_ranges():
    windows = profile.run_windows(synthetic_trace())
    assert windows == {"eager": (10, 110, 120), "mlpgen": (120, 160, float("inf"))}
    assert profile.analyse([ev("x", "kernel", 0, 1)], forwards=1) == {}


@pytest.fixture
def module(tmp_path, monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)  # the torch path on the CPU
    spec = MLPSpec((16, 48, 10), act="gelu", dtype="fp32")
    return write_module(module_path(tmp_path, spec), spec)


def test_profile_command_table_trace_and_report(module, tmp_path, capsys):
    trace, md = tmp_path / "trace.json", tmp_path / "report.md"
    args = ["profile", str(module), "--batch", "8", "--forwards", "3"]
    args += ["--trace", str(trace), "--report", str(md), "--bench", str(FIXTURE)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "mlp_16x48x10_gelu_fp32 at batch 8, 3 forwards each" in out
    header = out.splitlines()[2].split()
    assert header == ["eager", "mlpgen"]
    assert "CPU time per call" in out and "torch ops per forward" in out
    top = "aten::linear" if not torch.cuda.is_available() else "top kernels"
    assert top in out

    events = json.loads(trace.read_text())["traceEvents"]
    ranges = {e["name"] for e in events if e.get("cat") == "user_annotation"}
    assert {"eager", "mlpgen", "eager.forward", "mlpgen.forward"} <= ranges
    assert json.loads(trace.read_text())["mlpgen"]["batch"] == 8

    text = md.read_text()
    assert text.startswith("# Where the time goes: `mlp_16x48x10_gelu_fp32` at batch 8")
    assert "| CPU time per call, µs |" in text and top in text
    assert "mlpgen profile" in text and "--batch 8" in text  # the command that produced it
    assert "`mlp_256x512x256_gelu_fp16`: mlpgen vs eager" in text  # the recorded bench
    if (tmp_path / "report.png").exists():
        assert "![latency vs batch](report.png)" in text


def test_profile_json(module, capsys):
    assert main(["profile", str(module), "--batch", "5", "--forwards", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["runs"]) == {"eager", "mlpgen"}
    assert result["runs"]["eager"]["ops_per_forward"] >= 3  # linear, gelu, linear


def test_profile_train_profiles_training_steps(module, capsys):
    """--train: each call is bench --train's step, so the backward's ops are in the run and
    the table counts per training step."""
    assert main(["profile", str(module), "--batch", "5", "--forwards", "2", "--train"]) == 0
    out = capsys.readouterr().out
    assert "at batch 5, 2 training steps each" in out and "torch ops per training step" in out
    assert main(["profile", str(module), "--batch", "5", "--forwards", "2", "--json"]) == 0
    forward = json.loads(capsys.readouterr().out)
    assert (
        main(["profile", str(module), "--batch", "5", "--forwards", "2", "--train", "--json"]) == 0
    )
    step = json.loads(capsys.readouterr().out)
    assert step["train"] and not forward["train"]
    for label in ("eager", "mlpgen"):  # the backward's ops come on top of the forward's
        assert step["runs"][label]["ops_per_forward"] > forward["runs"][label]["ops_per_forward"]


@pytest.mark.parametrize("batch, forwards", [(0, 1), (4, 0), (2.5, 1), (True, 1), (4, "3")])
def test_profile_module_refuses_bad_counts_before_running_anything(module, batch, forwards):
    """Bad input to the CLI is tests/test_bad_input.py's; the function checks its own."""
    with pytest.raises(ValueError, match="must be a positive integer"):
        profile.profile_module(module, batch, forwards)


@pytest.mark.gpu
def test_profile_on_gpu_counts_kernels(load_generated):
    _, path = load_generated(MLPSpec((256, 512, 256), act="gelu", dtype="fp16"))
    result = profile.profile_module(path, 64, forwards=5)
    eager, mlpgen = result["runs"]["eager"], result["runs"]["mlpgen"]
    assert result["device"] == "cuda"
    assert eager["kernels_per_forward"] >= 3  # two GEMMs and the GELU at least
    assert 1 <= mlpgen["kernels_per_forward"] < eager["kernels_per_forward"]
    assert mlpgen["gpu_us_per_forward"] > 0 and eager["top_kind"] == "kernels"
