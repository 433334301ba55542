"""`mlpgen bench`: its pure parts (speedups, verdicts, merging, tables, plot) on a recorded
fixture, its plumbing on the CPU, its refusals; the real run on a GPU (gpu-marked)."""

import errno
import json
import math
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
import torch

from mlpgen import bench, cli, report
from mlpgen.cli import main
from mlpgen.emit import module_path, write_module
from mlpgen.spec import MLPSpec
from mlpgen.verify import random_problem, reference, rel_error

FIXTURE = Path(__file__).parent / "fixtures" / "bench_synthetic.json"


@pytest.fixture
def fixture_data():
    return json.loads(FIXTURE.read_text())


@pytest.fixture
def small_module(tmp_path, monkeypatch):
    """A small generated module whose CPU path is torch (not the Triton interpreter)."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)  # read when the module is imported
    spec = MLPSpec((16, 40, 8), act="silu", dtype="fp32")
    return write_module(module_path(tmp_path, spec), spec)


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mlpgen: error:"), err
    return err


# ---------------------------------------------------------------- pure parts


def test_speedup_is_eager_over_this():
    assert bench.speedup(60.0, 10.0) == 6.0
    assert bench.speedup(60.0, 120.0) == 0.5
    for base, us in ((None, 1.0), (1.0, None), (1.0, 0.0), (math.inf, 1.0)):
        assert bench.speedup(base, us) is None


def test_add_speedups_against_eager_at_the_same_batch():
    cells = [
        bench.Cell(1, "eager", "ok", host_us=60.0, gpu_us=12.0),
        bench.Cell(1, "mlpgen", "ok", host_us=10.0, gpu_us=4.0),
        bench.Cell(1, "compile", "WRONG", host_us=5.0, gpu_us=1.0),
        bench.Cell(64, "eager", "failed: OutOfMemoryError", host_us=None),
        bench.Cell(64, "mlpgen", "ok", host_us=10.0, gpu_us=4.0),
    ]
    bench.add_speedups(cells)
    assert (cells[0].host_speedup, cells[0].gpu_speedup) == (1.0, 1.0)
    assert (cells[1].host_speedup, cells[1].gpu_speedup) == (6.0, 3.0)
    assert cells[2].host_speedup is None  # a wrong answer gets no speedup
    assert cells[4].host_speedup is None  # no baseline at batch 64


def test_failure_is_one_short_line():
    text = bench.failure(RuntimeError("first line\nsecond line"))
    assert text == "failed: RuntimeError: first line"
    assert len(bench.failure(ValueError("x" * 500))) <= 168
    assert bench.failure(KeyError()) == "failed: KeyError"


def test_pick_contenders_always_keeps_eager():
    names = [c.name for c in bench.pick_contenders(None, False)]
    assert names == [c.name for c in bench.CONTENDERS if not c.floor]
    assert [c.name for c in bench.pick_contenders(None, False, train=True)][-1] == "loss"
    with pytest.raises(ValueError, match="'loss' is a training step's part"):
        bench.pick_contenders(["loss"], False)
    assert [c.name for c in bench.pick_contenders(["mlpgen"], False)] == ["eager", "mlpgen"]
    assert "compile" not in [c.name for c in bench.pick_contenders(None, True)]
    assert "max-autotune" not in [c.name for c in bench.pick_contenders(None, True)]
    with pytest.raises(ValueError, match="unknown contender 'triton'"):
        bench.pick_contenders(["triton"], False)


def test_compile_runs_last_so_a_budget_cuts_it_first():
    order = [[c.name for c in phase] for phase in bench.phases(bench.CONTENDERS)]
    assert order == [
        ["eager", "eager+graph", "mlpgen", "mlpgen+graph", "loss"],
        ["compile"],
        ["max-autotune"],
    ]


def test_default_batches_prefer_this_gpus_buckets():
    tuned = {"default": {1: {}, 64: {}}, "H200|sm90|132": {4096: {}, 16: {}}}
    assert bench.default_batches(tuned, "H200|sm90|132") == (16, 4096)
    assert bench.default_batches(tuned, "other") == (1, 64)
    assert bench.default_batches({}, None) == bench.DEFAULT_BUCKETS


def test_merge_runs_fills_what_the_first_run_skipped(fixture_data):
    first = json.loads(json.dumps(fixture_data))
    for r in first["results"]:
        if r["contender"] == "max-autotune":
            r.update(status="skipped: over --budget 60 s", host_us=None, gpu_us=None)
    second = json.loads(json.dumps(fixture_data))
    second["command"] = "mlpgen bench ... --only max-autotune"
    merged = bench.merge_runs([first, second])
    cells = {(r["batch"], r["contender"]): r for r in merged["results"]}
    assert cells[(1, "max-autotune")]["status"] == "ok"
    assert cells[(262144, "max-autotune")]["status"].startswith("failed")
    assert len(merged["results"]) == len(fixture_data["results"])
    assert merged["merged_commands"][1].endswith("--only max-autotune")
    other_gpu = json.loads(json.dumps(fixture_data))
    other_gpu["env"]["gpu"] = "NVIDIA A100"
    with pytest.raises(ValueError, match="GPU"):
        bench.merge_runs([first, other_gpu])


def test_runs_timed_by_do_bench_alone_say_so(fixture_data):
    """Runs recorded before bench kept the GPU busy over each call's launch timed the host too
    where a call's launches outlast do_bench's flush: re-printed, they say so; merged with a run
    of today's bench, the note says it was some of them."""
    old = json.loads(json.dumps(fixture_data))
    old["settings"]["gpu_time"] = "triton.testing.do_bench median (L2 flushed before each call)"
    new = json.loads(json.dumps(fixture_data))
    new["settings"]["gpu_time"] = bench.GPU_TIME

    def do_bench_notes(data):
        return [n for n in report.bench_notes(data) if "do_bench alone" in n]

    assert len(do_bench_notes(old)) == 1 and not do_bench_notes(new)
    assert "note: GPU time by triton.testing.do_bench alone" in report.bench_text(old)
    merged = bench.merge_runs([new, old])
    assert merged["settings"]["gpu_time"] == [bench.GPU_TIME, old["settings"]["gpu_time"]]
    assert "in some of the merged runs" in do_bench_notes(merged)[0]
    assert not do_bench_notes(bench.merge_runs([new, new]))


def test_table_from_recorded_fixture(fixture_data):
    text = report.bench_text(fixture_data)
    lines = text.splitlines()
    assert lines[0].startswith("mlp_256x512x256_gelu_fp16 on NVIDIA H200")
    assert "torch 2.11.0" in lines[0] and "triton 3.6.0" in lines[0]
    header = next(line for line in lines if line.lstrip().startswith("batch"))
    assert header.split() == ["batch"] + [c.name for c in bench.CONTENDERS if not c.floor]
    row1 = next(line for line in lines if line.split()[:1] == ["1"])
    assert "60.2 (1.00×)" in row1 and "9.40 (6.40×)" in row1
    assert "WRONG" in text and "failed" in text
    assert "mlpgen+graph at batch 1024: WRONG output (rel err 4.10e-01" in text
    assert "max-autotune at batch 262144: failed: OutOfMemoryError" in text
    assert "each batch size is compiled on its first call" in text
    md = report.bench_markdown(fixture_data, plot="bench.png")
    assert "| batch | eager |" in md and "![latency vs batch](bench.png)" in md
    assert fixture_data["command"] in md


def test_plot_from_recorded_fixture(fixture_data, tmp_path):
    pytest.importorskip("matplotlib")
    out = report.plot_bench(fixture_data, tmp_path / "bench.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_minor_tick_labels_only_at_2_and_5():
    assert [report.minor_label(v) for v in (2, 3, 5, 20, 50, 70, 0.2)] == [
        "2",
        "",
        "5",
        "20",
        "50",
        "",
        "0.2",
    ]


# ---------------------------------------------------------------- the command


def test_bench_without_cuda_exits_2(small_module, capsys, monkeypatch):
    monkeypatch.setattr(cli, "cuda_available", lambda: False)
    assert main(["bench", str(small_module)]) == 2
    assert "bench needs a CUDA GPU" in one_error_line(capsys)


@pytest.mark.parametrize(
    "args, message",
    [
        (["bench"], "module path"),
        (["bench", "missing.py"], "no such file"),
        (["bench", "{module}", "--only", "triton"], "unknown contender"),
        (["bench", "{module}", "--batches", "0"], "positive"),
        (["bench", "{module}", "--plot", "no/such/dir/x.png"], "--plot"),
        (["bench", "{module}", "--load", "{fixture}"], "not both"),
        (["bench", "--load", "missing.json"], "--load"),
    ],
)
def test_bench_bad_input_exits_2(small_module, capsys, args, message):
    args = [a.format(module=small_module, fixture=FIXTURE) for a in args]
    assert main(args) == 2
    assert message in one_error_line(capsys)


def test_plot_without_matplotlib_exits_2_before_measuring(small_module, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    monkeypatch.setattr(bench, "run_bench", lambda *a, **k: pytest.fail("measured"))
    assert main(["bench", str(small_module), "--plot", "x.png"]) == 2
    assert "pip install 'mlpgen[plot]'" in one_error_line(capsys)


def test_a_plot_that_cannot_be_written_keeps_the_printed_numbers(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")

    def full_disk(data, path):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(report, "plot_bench", full_disk)
    assert main(["bench", "--load", str(FIXTURE), "--json", "--plot", str(tmp_path / "b.png")]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["results"]  # the numbers came out before the plot failed
    assert captured.err.strip().splitlines()[-1].endswith("No space left on device")


def test_load_recorded_runs_prints_table_json_and_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "b.png"
    assert main(["bench", "--load", str(FIXTURE), "--json", "--plot", str(png)]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["name"] == "mlp_256x512x256_gelu_fp16" and len(data["results"]) == 18
    assert "speedup vs eager" in captured.err and png.exists()
    assert main(["bench", "--load", str(FIXTURE)]) == 0
    assert "speedup vs eager" in capsys.readouterr().out


# ---------------------------------------------------------------- the plumbing on the CPU


def test_sequential_baseline_is_the_spec():
    spec = MLPSpec((12, 20, 20, 5), act="gelu_tanh", out_act="sigmoid", dtype="fp32")
    x, weights, biases = random_problem(spec, 9)
    seq = bench.build_sequential(spec, weights, biases)
    kinds = [type(m).__name__ for m in seq]
    assert kinds == ["Linear", "GELU", "Linear", "GELU", "Linear", "Sigmoid"]
    assert rel_error(seq(x), reference(spec, x, weights, biases)) < 1e-6


def test_run_bench_plumbing_on_cpu(small_module, monkeypatch):
    contenders = bench.pick_contenders(["eager+graph", "mlpgen"], no_compile=True)
    data = bench.run_bench(small_module, (3, 17), contenders, rep_ms=2, device="cpu")
    cells = {(r["batch"], r["contender"]): r for r in data["results"]}
    assert data["batches"] == [3, 17] and len(cells) == 6
    for b in (3, 17):
        assert cells[(b, "eager")]["status"] == "ok" and cells[(b, "eager")]["host_speedup"] == 1
        mlpgen = cells[(b, "mlpgen")]
        assert mlpgen["status"] == "ok" and mlpgen["err"] < 1e-3 and mlpgen["host_us"] > 0
        assert cells[(b, "eager")]["err"] < 1e-3  # eager is checked against the reference too
        assert mlpgen["gpu_us"] is None  # no GPU time without a GPU
        assert cells[(b, "eager+graph")]["status"].startswith("failed: RuntimeError: CUDA")
    assert data["env"]["torch"] == torch.__version__ and "triton" in data["env"]
    json.dumps(data)  # JSON-ready as returned

    # a contender that computes something else is reported WRONG, and the run goes on
    monkeypatch.setattr(bench, "build_fused", lambda mod, w, b: lambda x: x[:, :8] * 0 + 1)
    data = bench.run_bench(small_module, (5,), contenders, rep_ms=2, device="cpu")
    (wrong,) = [r for r in data["results"] if r["contender"] == "mlpgen"]
    assert wrong["status"] == "WRONG" and wrong["host_speedup"] is None
    assert wrong["reason"].startswith("element [") and "x the tolerance" in wrong["reason"]
    assert f"mlpgen at batch 5: WRONG output ({wrong['reason']})" in report.bench_text(data)


def test_a_batchs_contenders_are_timed_together_else_each_alone(small_module, monkeypatch):
    """At a batch the checked contenders are timed in one interleaved time_calls; where that
    fails, each is timed alone, and one that fails alone is a failed cell, the others timed."""
    contenders = bench.pick_contenders(["mlpgen"], no_compile=True)
    together = []
    real = bench.time_calls

    def spy(calls, *args, **kwargs):
        together.append((len(calls), args[2], kwargs["loops"]))
        return real(calls, *args, **kwargs)

    monkeypatch.setattr(bench, "time_calls", spy)
    data = bench.run_bench(small_module, (3, 17), contenders, rep_ms=2, device="cpu", rounds=3)
    assert together == [(2, 3, 6)] * 2  # eager and mlpgen per batch, in 3 rounds of 2 loops
    assert "in 3 interleaved rounds" in data["settings"]["order"]
    assert all(r["status"] == "ok" and r["host_us"] > 0 for r in data["results"])

    def broken(calls, *args, **kwargs):
        raise torch.OutOfMemoryError("out of memory")

    alone = []

    def one(call, *args, **kwargs):
        alone.append(call)
        if len(alone) == 2:
            raise RuntimeError("boom")
        return real({0: call}, *args[:2], 1, **kwargs)[0]

    monkeypatch.setattr(bench, "time_calls", broken)
    monkeypatch.setattr(bench, "time_call", one)
    data = bench.run_bench(small_module, (3,), contenders, rep_ms=2, device="cpu")
    cells = {r["contender"]: r for r in data["results"]}
    assert len(alone) == 2
    assert cells["eager"]["status"] == "ok" and cells["eager"]["host_us"] > 0
    assert cells["mlpgen"]["status"] == "failed: RuntimeError: boom"
    assert cells["mlpgen"]["host_us"] is None


def test_bench_says_what_the_module_ran_at_each_batch(tmp_path, monkeypatch):
    """The bench records, per batch, the config the module dispatched to, and the CUDA-graph
    winner where a capture runs another; the text groups batches that ran the same thing."""
    from mlpgen.emit import entry, with_graph_winner
    from mlpgen.spec import KernelConfig

    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    spec = MLPSpec((16, 40, 8), act="silu", dtype="fp32")
    stream = KernelConfig("stream", block_m=16, block_n=16, chunk=16, num_stages=3)
    split = KernelConfig("split", block_m=16, chunk=16, block_n=16, block_k=16)
    table = {1: with_graph_winner(entry(stream), split, 4.0), 4096: entry(KernelConfig("torch"))}
    path = write_module(module_path(tmp_path, spec), spec, "default", table)  # the CPU's table
    contenders = bench.pick_contenders(["mlpgen"], no_compile=True)
    data = bench.run_bench(path, (1, 2, 5000), contenders, rep_ms=2, device="cpu")
    assert data["dispatch"] == {
        "1": {"call": stream.kernel_name, "graph": split.kernel_name},
        "2": {"call": stream.kernel_name, "graph": split.kernel_name},
        "5000": {"call": "torch (unfused)"},
    }
    text = report.bench_text(json.loads(json.dumps(data)))
    ran = f"note: mlpgen ran {stream.kernel_name} (in a CUDA graph: {split.kernel_name})"
    assert f"{ran} at batch 1, 2\n" in text
    assert "note: mlpgen ran torch (unfused) at batch 5000" in text
    data["dispatch"]["1"]["lane"] = data["dispatch"]["5000"]["lane"] = "native"  # as on a GPU
    text = report.bench_text(data)
    assert f"{ran[:-1]}, calls through the native lane) at batch 1\n" in text
    assert f"{ran} at batch 2\n" in text
    assert "ran torch (unfused) (calls through the native lane) at batch 5000" in text


def test_budget_skips_the_rest(small_module):
    contenders = bench.pick_contenders(["mlpgen"], no_compile=True)
    data = bench.run_bench(small_module, (3,), contenders, rep_ms=2, budget_s=0, device="cpu")
    assert all(r["status"].startswith("skipped: over --budget") for r in data["results"])
    assert "skipped" in report.bench_text(data)


def test_cells_round_trip_through_json():
    cell = bench.Cell(4, "mlpgen", "ok", host_us=1.5, gpu_us=1.0)
    assert bench.Cell(**json.loads(json.dumps(asdict(cell)))) == cell


# ---------------------------------------------------------------- on the GPU


@pytest.mark.gpu
def test_bench_on_gpu_every_contender_is_correct(load_generated):
    spec = MLPSpec((256, 512, 256), act="gelu", dtype="fp16")
    _, path = load_generated(spec)
    data = bench.run_bench(path, (64,), bench.CONTENDERS, warmup_ms=5, rep_ms=20)
    assert data["env"]["gpu"] and data["env"]["cuda"]
    for r in data["results"]:
        assert r["status"] == "ok", r
        assert r["host_us"] > 0 and r["gpu_us"] > 0, r
        assert r["err"] <= 1, r
