"""benchmarks/render.py: BENCHMARKS.md and README.md's results table from recorded bench JSON."""

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("benchmarks_render", ROOT / "benchmarks/render.py")
render = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = render  # its dataclass looks its module up there
spec.loader.exec_module(render)

NAME = "mlp_16x32x8_relu_fp16"
HOST = {"eager": 40.0, "compile": 120.0, "mlpgen": 8.0, "eager+graph": 9.0, "mlpgen+graph": 3.0}
GPU = {"eager": 12.0, "compile": 11.0, "mlpgen": 4.0, "eager+graph": 11.5, "mlpgen+graph": 3.5}


def bench_run(name: str = NAME, batches=(1, 64)) -> dict:
    """What `mlpgen bench --json` writes, cut down to what the renderer reads."""
    return {
        "command": f"mlpgen bench tuned/{name}.py --json",
        "module": f"tuned/{name}.py",
        "name": name,
        "spec": {"widths": [16, 32, 8], "act": "relu", "out_act": "none", "dtype": "fp16"},
        "env": {
            "torch": "2.11.0",
            "triton": "3.6.0",
            "python": "3.12.3",
            "mlpgen": "0.1.0",
            "date": "2026-12-02T10:00:00",
            "gpu": "NVIDIA H200",
            "gpu_key": "NVIDIA H200|sm90|132",
            "cuda": "13.0",
            "tuned_for_this_gpu": True,
        },
        "settings": {"host_time": "loops of calls", "gpu_time": "one call after a flush"},
        "contenders": [{"name": n, "compile_mode": None} for n in HOST],
        "batches": list(batches),
        "dispatch": {str(b): {"call": "_k_rowblock_m16_c32 (PDL)"} for b in batches},
        "results": [
            {"batch": b, "contender": n, "status": "ok", "host_us": HOST[n], "gpu_us": GPU[n]}
            for b in batches
            for n in HOST
        ],
    }


def train_run(name: str = NAME) -> dict:
    """What `mlpgen bench --train --json` writes, cut down to what the renderer reads."""
    run = bench_run(name)
    run["command"] = f"mlpgen bench tuned/{name}.py --train --json"
    run["train"] = True
    run["settings"] |= {
        "grad": "a training step per call: forward, loss, torch.autograd.grad",
        "check": "the output and every gradient against the step in fp32",
        "loss": "y.float().square().mean()",
        "loss_scale": {"1": 8.0, "64": 64.0},
    }
    for r in run["results"]:
        r["errs"] = {"y": 0.1, "dx": 0.2, "dW0": 0.1, "db0": 0.1, "dW1": 0.1, "db1": 0.1}
        r["err"] = 0.2
    return run


def write(folder: Path, data: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{data['name']}.json").write_text(json.dumps(data))


@pytest.fixture
def results(tmp_path) -> Path:
    write(tmp_path / "benchmarks" / "results" / "h200", bench_run())
    return tmp_path / "benchmarks" / "results"


def test_a_module_row_has_its_times_and_speedups(results):
    text = render.benchmarks_md(render.load(results))
    header = (
        "| batch | eager µs | compile µs | mlpgen µs | eager / mlpgen | compile / mlpgen "
        "| graph: eager µs | graph: mlpgen µs | graph: eager / mlpgen "
        "| GPU: eager µs | GPU: mlpgen µs | GPU: eager / mlpgen | mlpgen ran |"
    )
    row = (
        "| 64 | 40.0 | 120.0 | 8.00 | 5.00× | 15.00× | 9.00 | 3.00 | 3.00× "
        "| 12.0 | 4.00 | 3.00× | `_k_rowblock_m16_c32 (PDL)` |"
    )
    assert header in text.splitlines()
    assert row in text.splitlines()
    cmd = f"`mlpgen bench tuned/{NAME}.py --json > benchmarks/results/h200/{NAME}.json`"
    assert cmd in text.splitlines()
    assert f"| `{NAME}` | 5.00× | 5.00× |" in text  # the matrix: eager / mlpgen per call
    assert "| NVIDIA H200 | NVIDIA H200\\|sm90\\|132 | 13.0 | 2.11.0 | 3.6.0 |" in text


def test_only_the_claimed_gpus_results_are_rendered(results):
    """Another card's results stay data: no section, no hardware row, no number of theirs."""
    other = bench_run()
    other["env"] = other["env"] | {"gpu": "NVIDIA H100 80GB HBM3"}
    write(results / "h100", other)
    text = render.benchmarks_md(render.load(results))
    assert [gpu.folder for gpu in render.load(results)] == ["h200"]
    assert "H100" not in text and "benchmarks/results/h100" not in text


def test_a_wrong_cell_says_so_and_gets_no_speedup(results):
    data = bench_run()
    bad = next(r for r in data["results"] if r["batch"] == 1 and r["contender"] == "mlpgen")
    bad.update(status="WRONG", rel_err=0.5)
    write(results / "h200", data)
    text = render.benchmarks_md(render.load(results))
    assert "| 1 | 40.0 | 120.0 | WRONG | - | - |" in text
    assert "mlpgen at batch 1: WRONG output" in text


def test_sections_without_results_are_left_out(results):
    text = render.benchmarks_md(render.load(results))
    for title in ("## Training step", "## Tune times", "## Search quality"):
        assert title not in text


def test_sections_with_results_are_rendered(results):
    h200 = results / "h200"
    write(h200 / "train", train_run())
    tuned = {"seconds": 40.0, "measured": 300, "total_seconds": 61.0}
    tuned |= {"module": f"tuned/{NAME}.py", "buckets": {"1": {}, "64": {}}}
    write(h200 / "tune", {"name": NAME, **tuned})
    # a cold generating run (benchmarks/record_search.sh cold): its tune nested, its wall time
    cold = {"module": f"<out>/{NAME}.py", "cold": True, "wall_seconds": 70.2}
    cold |= {"command": "mlpgen --widths 16,32,8 --json", "native_lane": "built before"}
    phases = {"search": 31.5, "decide": 8.5}
    cold["tuned"] = dict(tuned, compiled=150, compile_wait_seconds=13.5, phase_seconds=phases)
    write(h200 / "tune", dict(cold, name="cold_" + NAME))
    table = {
        "name": "replay",
        "title": "Held-out replay",
        "command": "mlpgen replay log.json",
        "header": ["spec", "within 3%"],
        "rows": [["256,512,256", "19/20"]],
    }
    write(h200 / "search", table)
    text = render.benchmarks_md(render.load(results))
    assert "## Training step: NVIDIA H200" in text
    assert f"| `{NAME}` | 2 | 300 | - | - | 40.0 | - | 61.0 | - |" in text
    assert f"| `{NAME}` (cold) | 2 | 300 | 150 | 13.5 | 31.5 | 8.50 | 61.0 | 70.2 |" in text
    assert "mlpgen.runtime's native lane: built before." in text
    tune_cmd = f"mlpgen retune tuned/{NAME}.py --json > "
    assert f"- `{tune_cmd}benchmarks/results/h200/tune/{NAME}.json`" in text
    assert "#### Held-out replay" in text and "| 256,512,256 | 19/20 |" in text


def test_a_train_run_renders_as_its_own_section(results):
    data = train_run()
    bad = next(r for r in data["results"] if r["batch"] == 64 and r["contender"] == "mlpgen")
    reason = "dW1: element [3, 5] is 0.5, expected 0.2 (4x the tolerance)"
    bad.update(status="WRONG", host_us=None, gpu_us=None, reason=reason)
    data["env"] |= {"train_lane": "python", "MLPGEN_NATIVE_TRAIN": "0"}  # a switch set: named
    write(results / "h200" / "train", data)
    text = render.benchmarks_md(render.load(results))
    train = text.split("## Training step: NVIDIA H200", 1)[1]
    assert render.TRAIN_TEXT in train.splitlines()
    cmd = (
        f"`MLPGEN_NATIVE_TRAIN=0 mlpgen bench tuned/{NAME}.py --train --json"
        f" > benchmarks/results/h200/train/{NAME}.json`"
    )
    assert cmd in train.splitlines()
    assert "| 1 | 40.0 | 120.0 | 8.00 | 5.00× | 15.00× |" in train
    assert "| 64 | 40.0 | 120.0 | WRONG | - | - |" in train
    assert f"- mlpgen at batch 64: WRONG, not timed ({reason})" in train.splitlines()
    assert "- checked: the output and every gradient against the step in fp32" in text
    assert "- gradients: a training step per call" in text


def test_a_train_table_shows_the_loss_alone_and_its_share_of_eagers_step(results):
    data = train_run()
    data["results"] += [
        {"batch": b, "contender": "loss", "status": "ok", "host_us": 20.0, "gpu_us": 2.0}
        for b in (1, 64)
    ]
    write(results / "h200" / "train", data)
    train = render.benchmarks_md(render.load(results)).split("## Training step", 1)[1]
    header = next(line for line in train.splitlines() if line.startswith("| batch"))
    assert "| GPU: eager / mlpgen | loss alone µs | loss alone / eager |" in header
    assert render.TRAIN_TEXT + render.LOSS_TEXT in train.splitlines()
    row = next(line for line in train.splitlines() if line.startswith("| 1 |"))
    assert row.startswith("| 1 | 40.0 | 120.0 | 8.00 | 5.00× | 15.00× |")
    assert "| 20.0 | 0.50× |" in row


def test_a_table_shows_only_its_batches_shown():
    """A comparison's JSON keeps every row; "batches_shown" picks the rows the page shows."""
    rows = [["a", str(b), f"{b}.5"] for b in (1, 16, 64)]
    table = {"title": "t", "command": "c", "header": ["module", "batch", "us"], "rows": rows}
    text = "\n".join(render.search_section({**table, "batches_shown": [1, 64]}))
    assert "| a | 1 | 1.5 |" in text and "| a | 64 | 64.5 |" in text and "16.5" not in text
    assert "16.5" in "\n".join(render.search_section(table))


def test_a_run_in_the_wrong_folder_is_refused(results):
    write(results / "h200" / "train", bench_run("mlp_forward"))
    with pytest.raises(ValueError, match="a forward bench, not in its folder"):
        render.load(results)
    (results / "h200" / "train" / "mlp_forward.json").unlink()
    write(results / "h200", train_run("mlp_train"))
    with pytest.raises(ValueError, match="a training bench"):
        render.load(results)


def test_readme_table_replaces_only_what_is_between_its_markers(results):
    write(results / "h200", bench_run(render.HEADLINE[1], batches=(1, 64, 1024)))
    table = render.readme_table(render.load(results))
    readme = f"intro\n{render.README_BEGIN}\nold table\n{render.README_END}\nrest\n"
    out = render.with_readme_table(readme, table)
    assert out.startswith("intro\n") and out.endswith(f"{render.README_END}\nrest\n")
    assert "old table" not in out
    assert "| 1024 | 40.0 | 8.00 | 5.00× | 12.0 | 4.00 | 3.00× |" in out
    assert "compile" not in out  # eager and mlpgen only


def test_over_the_line_budget_nothing_is_written(tmp_path, capsys):
    results = tmp_path / "benchmarks" / "results"
    for i in range(40):
        write(results / "h200", bench_run(f"mlp_{i}x8_relu_fp16", batches=(1, 16, 64, 256)))
    assert render.main(["--results", str(results), "--check"]) == 1
    assert f"at most {render.MAX_LINES}" in capsys.readouterr().err


def test_committed_docs_are_rendered_from_committed_results():
    """BENCHMARKS.md and README.md's table are what the results in the tree render to: a new
    result needs `python benchmarks/render.py`, and neither file is edited by hand."""
    gpus = render.load()
    text = render.benchmarks_md(gpus)
    assert text.count("\n") <= render.MAX_LINES
    assert (ROOT / "BENCHMARKS.md").read_text() == text
    readme = (ROOT / "README.md").read_text()
    assert render.README_BEGIN in readme
    assert render.with_readme_table(readme, render.readme_table(gpus)) == readme


def test_recorded_results_name_their_command_and_no_run():
    results = ROOT / "benchmarks" / "results"
    for path in sorted([*results.glob("*/*.json"), *results.glob("*/train/*.json")]):
        data = json.loads(path.read_text())
        assert data["command"].startswith(f"mlpgen bench {data['module']} "), path
        assert data["env"]["gpu"] and data["env"]["torch"] and data["env"]["triton"], path
        flat = json.dumps(data)
        assert not re.search(r"run[0-9]+|session", flat, re.IGNORECASE), path


def test_a_time_shows_its_spread_where_it_is_noise():
    cell = {"status": "ok", "host_us": 584.9, "host_spread": 0.219, "gpu_us": 118.9}
    assert render.time_text(cell, "host_us") == "584.9 ±22%"
    assert render.time_text(cell | {"host_spread": 0.049}, "host_us") == "584.9"
    assert render.time_text(cell, "gpu_us") == "118.9"  # no spread recorded
    assert render.time_text(cell | {"status": "WRONG"}, "host_us") == "WRONG"
