"""`mlpgen bench --train`: the training step's check (output and gradients against fp32, eager's
own error as a floor), its loss scale, the JSON it writes and its tables, on the CPU; the real
run on a GPU (gpu-marked). Also the training example under benchmarks/, a few steps on CPU."""

import importlib.util
import json
import math
from pathlib import Path

import pytest
import torch

from mlpgen import bench, report, train_bench
from mlpgen.cli import main
from mlpgen.emit import module_path, write_module
from mlpgen.spec import MLPSpec
from mlpgen.verify import random_problem

ROOT = Path(__file__).resolve().parents[1]
SPEC = MLPSpec((16, 40, 8), act="silu", dtype="fp32")


@pytest.fixture
def small_module(tmp_path, monkeypatch):
    """A small generated module whose CPU path is torch (not the Triton interpreter)."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)  # read when the module is imported
    return write_module(module_path(tmp_path, SPEC), SPEC)


def fp32_step(spec, m, seed=0):
    """A reference step's tensors (y, dx, dW0, db0, ...) on random_problem."""
    x, weights, biases = random_problem(spec, m, seed=seed)
    weights, biases = [w.float() for w in weights], [b.float() for b in biases]
    seq = train_bench.LossOf(bench.build_sequential(spec, weights, biases))
    x = x.float().requires_grad_()
    return tuple(t.detach() for t in train_bench.step(seq, tuple(seq.parameters()), x, None))


# ---------------------------------------------------------------- pure parts


def test_result_names_follow_parameter_order():
    assert train_bench.result_names(SPEC) == ("y", "dx", "dW0", "db0", "dW1", "db1")
    nobias = MLPSpec((4, 5, 6, 7), act="relu", bias=False)
    assert train_bench.result_names(nobias) == ("y", "dx", "dW0", "dW1", "dW2")


def test_loss_scale_keeps_fp16_gradients_normal():
    """fp16: a power of two making dL/dy = 2y*scale/(M*N) about y/sqrt(M), so that neither it
    (at the largest batch) nor a weight gradient (a sum over M rows) leaves fp16's range."""
    spec = MLPSpec((64, 64, 3), act="relu", dtype="fp16")
    for m in (1, 64, 16384, 1 << 21, 1 << 22):
        s = train_bench.loss_scale(spec, m)
        assert s == 2.0 ** round(math.log2(s))
        dy = 2 * s / (m * 3)  # for |y| = 1
        assert 0.5 / math.sqrt(m) <= dy <= 2 / math.sqrt(m)
        assert dy > torch.finfo(torch.float16).tiny * 4 and dy * m < 65504 / 4
    assert train_bench.loss_scale(MLPSpec((64, 3), dtype="bf16"), 1 << 20) == 1.0
    assert train_bench.loss_scale(SPEC, 1 << 20) == 1.0


def test_check_step_holds_gradients_to_their_largest_element():
    want = fp32_step(SPEC, 33)
    ok = train_bench.check_step(want, want, SPEC)
    assert ok.ok and ok.err == 0 and set(ok.errs) == set(train_bench.result_names(SPEC))

    # a gradient of any scale is judged relative to its largest element: 1e-6 times the
    # gradients, off by 0.2% of each one's largest element everywhere, passes ...
    tiny = [want[0]] + [g * 1e-6 for g in want[1:]]
    off = [tiny[0]] + [g + 2e-3 * g.abs().max() for g in tiny[1:]]
    assert train_bench.check_step(off, tiny, SPEC).ok
    # ... and 3% of it in one element of dW1 fails, naming the tensor and the element
    bad = list(tiny)
    bad[4] = tiny[4].clone()
    bad[4][5, 7] += 0.03 * tiny[4].abs().max()
    result = train_bench.check_step(bad, tiny, SPEC)
    assert not result.ok and result.where == (5, 7) and result.errs["dW1"] > 1
    assert result.reason.startswith("dW1: element [5, 7]") and "largest |dW1|" in result.reason
    assert max(result.errs.values()) == result.err

    nan = list(want)
    nan[1] = want[1].clone()
    nan[1][3, 0] = math.nan
    assert train_bench.check_step(nan, want, SPEC).reason.startswith("dx: element [3, 0]")
    assert not train_bench.check_step(want[:3], want, SPEC).ok  # a gradient missing


def test_check_step_allows_twice_eagers_own_error_and_no_more():
    """relu: a pre-activation within rounding of 0 flips the gradient of its row in any forward
    in the dtype; an error as large as twice eager's own in that tensor passes, more fails."""
    spec = MLPSpec((16, 32, 8), act="relu", dtype="fp16")
    want = fp32_step(spec, 200, seed=3)
    eager = [t.clone() for t in want]
    eager[4][2, 3] += 0.1 * want[4].abs().max()  # eager's dW1 off by 10% of its largest
    got = [t.clone() for t in want]
    got[4][5, 7] += 0.19 * want[4].abs().max()
    assert not train_bench.check_step(got, want, spec).ok
    assert train_bench.check_step(got, want, spec, eager).ok
    got[4][5, 7] += 0.02 * want[4].abs().max()
    result = train_bench.check_step(got, want, spec, eager)
    assert not result.ok and result.where == (5, 7)
    got[4][5, 7] = want[4][5, 7]
    got[1][7] *= 3  # a dx row three times too large: eager's dx is exact here
    assert not train_bench.check_step(got, want, spec, eager).ok


# ---------------------------------------------------------------- the run on the CPU


class DoubledGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y):
        return y.clone()

    @staticmethod
    def backward(ctx, g):
        return 2 * g


class RightForwardWrongBackward(torch.nn.Module):
    def __init__(self, seq):
        super().__init__()
        self.seq = seq

    def forward(self, x):
        return DoubledGrad.apply(self.seq(x))


def train_run(module, batches, contenders) -> dict:
    """A bench --train run on the CPU, quick."""
    return bench.run_bench(
        module, batches, contenders, rep_ms=2, device="cpu", models_type=train_bench.TrainModels
    )


def test_run_bench_train_on_cpu(small_module, monkeypatch):
    contenders = bench.pick_contenders(["eager+graph", "mlpgen", "loss"], True, train=True)
    monkeypatch.setenv("MLPGEN_NATIVE_TRAIN", "1")
    monkeypatch.delenv("MLPGEN_TRAIN_KERNELS", raising=False)
    data = train_run(small_module, (3, 17), contenders)
    data = json.loads(json.dumps(data))  # JSON-ready as returned
    assert data["train"] is True and data["batches"] == [3, 17]
    assert data["env"]["backward"] == {"3": "torch", "17": "torch"}  # the CPU, no interpreter
    assert data["env"]["train_lane"] == "native" and data["env"]["MLPGEN_NATIVE_TRAIN"] == "1"
    assert "MLPGEN_TRAIN_KERNELS" not in data["env"]  # recorded only where set
    assert data["settings"]["loss"] == "y.float().square().mean()"
    assert "loss_scale" not in data["settings"]  # fp32: no scale
    assert "autograd.grad" in data["settings"]["grad"]
    cells = {(r["batch"], r["contender"]): r for r in data["results"]}
    names = set(train_bench.result_names(SPEC))
    for b in (3, 17):
        for name in ("eager", "mlpgen"):
            r = cells[(b, name)]
            assert r["status"] == "ok" and r["host_us"] > 0 and r["gpu_us"] is None, r
            assert set(r["errs"]) == names and max(r["errs"].values()) == r["err"] < 1e-3
        assert cells[(b, "eager+graph")]["status"].startswith("failed: RuntimeError: CUDA")
        loss = cells[(b, "loss")]  # the step's floor: timed with the steps, nothing to check
        assert loss["status"] == "ok" and loss["host_us"] > 0 and loss["err"] is None
    text = report.bench_text(data)
    assert "loss" in text.splitlines()[3].split()  # a column of the per-call table
    assert text.startswith(
        "mlp_16x40x8_silu_fp32, training step (forward, y.float().square().mean(), backward)"
    )

    # the right output with wrong gradients: WRONG, and not timed
    monkeypatch.setattr(
        bench,
        "build_fused",
        lambda mod, w, b: RightForwardWrongBackward(bench.build_sequential(SPEC, w, b)),
    )
    data = train_run(small_module, (5,), contenders)
    (wrong,) = [r for r in data["results"] if r["contender"] == "mlpgen"]
    assert wrong["status"] == "WRONG" and wrong["errs"]["y"] < 1e-3
    assert wrong["host_us"] is None and wrong["host_speedup"] is None
    assert all(wrong["errs"][n] > 1 for n in names - {"y"})
    assert f"mlpgen at batch 5: WRONG, not timed ({wrong['reason']})" in report.bench_text(data)


def test_train_runs_merge_only_with_train_runs(small_module):
    contenders = bench.pick_contenders(["mlpgen"], no_compile=True)
    train = train_run(small_module, (3,), contenders)
    forward = bench.run_bench(small_module, (3,), contenders, rep_ms=2, device="cpu")
    assert forward["train"] is False
    with pytest.raises(ValueError, match="--train"):
        bench.merge_runs([forward, train])
    assert bench.merge_runs([train, train])["train"] is True


def test_load_prints_a_recorded_train_run(small_module, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    contenders = bench.pick_contenders(["mlpgen"], no_compile=True)
    data = train_run(small_module, (3, 9), contenders)
    recorded = tmp_path / "train.json"
    recorded.write_text(json.dumps(data))
    png = tmp_path / "train.png"
    assert main(["bench", "--load", str(recorded), "--plot", str(png)]) == 0
    assert "training step (forward" in capsys.readouterr().out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = report.bench_markdown(data)
    assert md.startswith(f"## `{SPEC.name}` (training step): mlpgen vs eager")


# ---------------------------------------------------------------- the example


def test_train_example_fits_the_torus_on_cpu(tmp_path, monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)  # the module's torch path
    spec = importlib.util.spec_from_file_location(
        "train_example", ROOT / "benchmarks/train_example.py"
    )
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    lines = []
    with pytest.warns(UserWarning, match="heuristic default"):
        losses = example.train(60, 512, "cpu", out=tmp_path, log_every=20, log=lines.append)
    assert (tmp_path / "mlp_3x64x64x64x1_relu_fp32.py").exists()
    assert lines[0] == "fused: [('mlp', 'mlp_3x64x64x64x1_relu_fp32')]"
    assert len(lines) == 4 and all("ms/step" in line for line in lines[1:])
    assert sum(losses[-10:]) < 0.3 * sum(losses[:10])


# ---------------------------------------------------------------- on the GPU


@pytest.mark.gpu
@pytest.mark.parametrize(
    "spec",
    [MLPSpec((48, 100, 37), act="gelu", dtype="fp16"), MLPSpec((32, 64, 64, 5), act="relu")],
)
def test_bench_train_on_gpu_checks_every_gradient(spec, load_generated, capsys):
    _, path = load_generated(spec)
    only = "eager+graph,compile,mlpgen,mlpgen+graph,loss"
    argv = ["bench", str(path), "--train", "--batches", "17,20000", "--only", only]
    assert main([*argv, "--rep", "10", "--warmup", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["train"] is True and data["batches"] == [17, 20000]
    assert set(data["settings"]["loss_scale"]) == {"17", "20000"}
    names = set(train_bench.result_names(spec))
    assert len(data["results"]) == 2 * 6
    for r in data["results"]:
        assert r["status"] == "ok", r
        if r["contender"] == "loss":  # the step's floor: timed, not checked
            assert r["err"] is None and r["host_us"] > 0 and r["gpu_us"] > 0, r
            continue
        assert set(r["errs"]) == names and max(r["errs"].values()) == r["err"] <= 1, r
        assert r["host_us"] > 0 and r["gpu_us"] > 0, r


@pytest.mark.gpu
def test_bench_train_graphs_leave_the_call_steps_on_their_own_stream(load_generated, tmp_path):
    """A graph contender's captured step keeps its autograd graph alive; on the parameters the
    call contenders step through, a later step would wait on the capture's stream (autograd
    warns once per process: so a process of its own, the warning an error)."""
    import subprocess
    import sys

    _, path = load_generated(MLPSpec((32, 64, 5), act="relu"))
    argv = ["bench", str(path), "--train", "--batches", "17,40", "--rep", "5", "--warmup", "1"]
    only = ["--only", "eager,eager+graph,mlpgen,mlpgen+graph", "--json"]
    warning = "error:The AccumulateGrad node's stream does not match"
    code = "import sys; from mlpgen.cli import main; sys.exit(main(sys.argv[1:]))"
    run = subprocess.run(
        [sys.executable, "-W", warning, "-c", code, *argv, *only],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads(run.stdout)["results"]
    assert len(results) == 2 * 4 and all(r["status"] == "ok" for r in results), results
