"""The CLI end to end in a temp dir: written, importable, correct; bad input -> exit 2, one line,
nothing written."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import SHIPPED

from mlpgen.cli import main
from mlpgen.selfcheck import load_module
from mlpgen.space import DEFAULT_BUCKETS
from mlpgen.verify import TOLERANCE, random_problem, reference, rel_error


def run_cli(args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "mlpgen.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=dict(os.environ, CUDA_VISIBLE_DEVICES=""),
    )


@pytest.mark.interpret
def test_bf16_is_checked_through_its_fp16_twin(tmp_path):
    """The interpreter's bf16 dot is wrong, so a bf16 module's kernels are checked as fp16
    (same source but for the element type) instead of failing a correct module."""
    proc = run_cli(["--widths", "24,40,9", "--act", "silu", "--dtype", "bf16", "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    check = json.loads(proc.stdout)["interpreter_check"]
    assert check["ok"] and check["checked_as"] == "fp16"
    assert check["tolerance"] == {"rtol": 3e-3, "atol": 3e-3}  # fp16's, not bf16's
    assert "as its fp16 twin" in proc.stderr
    written = sorted(p.name for p in (tmp_path / "tuned").glob("*.py"))
    assert written == ["__init__.py", "mlp_24x40x9_silu_bf16.py"]  # the twin stays out


@pytest.mark.interpret
def test_generating_a_shipped_spec_without_a_gpu_keeps_the_module_as_it_is(tmp_path):
    """The quick start's command run in a checkout that ships the module: without a GPU there is
    nothing to tune, the module keeps its GPU's table and the file is not touched."""
    shipped = SHIPPED[[p.stem for p in SHIPPED].index("mlp_64x64x64x64x64x3_relu_fp16")]
    (tmp_path / "tuned").mkdir()
    copy = tmp_path / "tuned" / shipped.name
    copy.write_text(shipped.read_text())
    proc = run_cli(["--widths", "64,64,64,64,64,3", "--act", "relu"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert copy.read_text() == shipped.read_text()
    assert f"{Path('tuned') / shipped.name} is up to date" in proc.stderr
    assert re.search(r"keeps its tables for [^.]*NVIDIA H200", proc.stderr)


@pytest.mark.interpret
def test_generate_writes_an_importable_correct_module(tmp_path):
    proc = run_cli(["--widths", "100,37,10", "--act", "silu", "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["name"] == "mlp_100x37x10_silu_fp16"
    assert summary["interpreter_check"]["ok"] and summary["tuned"] is False
    assert "tuning needs a CUDA GPU" in proc.stderr
    path = tmp_path / "tuned" / "mlp_100x37x10_silu_fp16.py"
    assert (tmp_path / "tuned" / "__init__.py").exists()
    check = subprocess.run(
        [sys.executable, "-c", "import tuned.mlp_100x37x10_silu_fp16 as m; print(m.SPEC['act'])"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert check.stdout.strip() == "silu", check.stderr
    mod = load_module(path)
    x, weights, biases = random_problem(mod_spec(mod), 29)
    err = rel_error(mod.mlp(x, weights, biases), reference(mod_spec(mod), x, weights, biases))
    assert err <= TOLERANCE["fp16"]


def mod_spec(mod):
    from mlpgen.spec import MLPSpec

    return MLPSpec.from_dict(mod.SPEC)


def test_version_is_the_installed_packages(capsys):
    """mlpgen --version prints the version the package was installed as, exit 0."""
    import importlib.metadata

    import mlpgen

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"mlpgen {mlpgen.__version__}\n"
    assert importlib.metadata.version("mlpgen") == mlpgen.__version__


def test_tune_options_come_typed_from_the_command_line():
    """The tuner gets a TuneOptions, never the argparse namespace."""
    from mlpgen.cli import generate_parser, tune_options
    from mlpgen.tune import TuneOptions

    args = generate_parser().parse_args(
        ["--widths", "8,8", "--batches", "64,1", "--trials", "7", "--exhaustive"]
        + ["--candidate-timeout", "5", "--workers", "2", "--storage", "sqlite:///x.db", "--train"]
    )
    assert tune_options(args) == TuneOptions(
        buckets=(1, 64),
        trials=7,
        storage="sqlite:///x.db",
        workers=2,
        exhaustive=True,
        candidate_timeout=5.0,
        train=True,
    )
    defaults = generate_parser().parse_args(["--widths", "8,8"])
    assert tune_options(defaults) == TuneOptions()


def test_retune_refuses_a_journal_in_a_missing_folder_before_anything_else(tmp_path, capsys):
    assert main(["--widths", "8,8", "--out", str(tmp_path), "--no-tune"]) == 0
    module = tmp_path / "mlp_8x8_gelu_fp16.py"
    before = module.read_text()
    capsys.readouterr()
    assert main(["retune", str(module), "--storage", str(tmp_path / "no" / "s.journal")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--storage" in err
    assert module.read_text() == before and not (tmp_path / "no").exists()


def test_unwritable_out_exits_2(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    for out in (blocker, blocker / "sub"):
        assert main(["--widths", "8,8", "--out", str(out), "--no-tune"]) == 2
        assert "--out" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_show_and_no_tune(tmp_path, capsys):
    out = tmp_path / "gen"
    assert main(["--widths", "16,32,8", "--act", "relu", "--out", str(out), "--no-tune"]) == 0
    path = out / "mlp_16x32x8_relu_fp16.py"
    capsys.readouterr()
    assert main(["show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "mlp_16x32x8_relu_fp16" in shown and "[default]" in shown
    assert "_k_rowblock_m16_c64" in shown
    assert main(["show", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["spec"]["widths"] == [16, 32, 8]


def test_show_names_the_last_tunes_search(tmp_path, capsys):
    """A GPU table's header: the last tune's date and its trials per bucket, or "exhaustive"
    where every candidate was measured (a trials count would misstate that search), and the
    buckets it covered where an earlier tune made the others."""
    from mlpgen.emit import entry, write_module
    from mlpgen.spec import KernelConfig, MLPSpec

    spec = MLPSpec((16, 32, 8), act="relu")
    path = tmp_path / f"{spec.name}.py"
    table = {1: entry(KernelConfig("torch"), us=1.0)}
    write_module(path, spec, "GPU A|sm90|132", table, {"date": "D1", "trials": 40})
    write_module(
        path, spec, "GPU B|sm90|132", table, {"date": "D2", "trials": 40, "exhaustive": True}
    )
    capsys.readouterr()
    assert main(["show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "[GPU A|sm90|132]  (date D1, trials 40)" in shown
    assert "[GPU B|sm90|132]  (date D2, exhaustive)" in shown
    table2 = {16: entry(KernelConfig("torch"), us=2.0)}
    prov = {"date": "D3", "trials": 40, "exhaustive": True, "buckets": [16]}
    write_module(path, spec, "GPU B|sm90|132", table2, prov, merge=True)
    assert main(["show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "[GPU B|sm90|132]  (date D3, exhaustive at 16 (other buckets: earlier tunes))" in shown
    prov |= {"train": {"trials": None, "seconds": 9.0, "date": "D4"}, "seeded": 2}
    write_module(path, spec, "GPU B|sm90|132", table2, prov, merge=True)
    assert main(["show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "earlier tunes), from 2 earlier cells, training step searched D4)" in shown


def test_refuses_to_overwrite_a_foreign_file(tmp_path, capsys):
    path = tmp_path / "mlp_8x8_gelu_fp16.py"
    path.write_text("print('mine')\n")
    assert main(["--widths", "8,8", "--out", str(tmp_path), "--no-tune"]) == 2
    assert path.read_text() == "print('mine')\n"


def test_wide_spec_defaults_to_the_persistent_kernel_then_torch(tmp_path, capsys):
    """A width over the rowblock kernel's limit is still fused at small batches: the persistent
    kernel stages hidden activations through global memory. Above 2048 rows the default is the
    torch path (the fused kernels lost to it on the H200). The module runs correctly on the
    CPU through both."""
    assert main(["--widths", "2048,16", "--out", str(tmp_path), "--no-tune", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["fused"] is True and "torch path" not in err
    mod = load_module(tmp_path / "mlp_2048x16_gelu_fp16.py")
    default = mod.TUNED["default"]
    assert {b: cell["strategy"] for b, cell in default.items()} == {
        b: "persist" if b <= 2048 else "torch" for b in DEFAULT_BUCKETS
    }
    assert all(
        cell["kernel"] in mod.KERNELS for cell in default.values() if cell["strategy"] != "torch"
    )
    assert mod.config_for(4, "default")["strategy"] == "persist"
    assert mod.config_for(3000, "default")["strategy"] == "torch"
    for rows in (4, 3000):
        x, weights, biases = random_problem(mod_spec(mod), rows)
        torch.testing.assert_close(mod.mlp(x, weights, biases), mod.reference(x, weights, biases))


def test_generating_again_for_fewer_buckets_keeps_the_modules_buckets(tmp_path):
    """Re-running mlpgen on an existing module with --batches (e.g. to re-tune one bucket)
    keeps the buckets the module had in its default table, beside the new ones (the tuner
    merges its GPU's table the same way): a GPU the module was not tuned on still finds every
    bucket's default."""
    from mlpgen.emit import read_module

    args = ["--widths", "16,32,8", "--out", str(tmp_path), "--no-tune"]
    assert main(args) == 0
    assert main([*args, "--batches", "16384,100"]) == 0
    [path] = tmp_path.glob("mlp_*.py")
    _, tuned, _ = read_module(path)
    assert sorted(tuned["default"]) == sorted({*DEFAULT_BUCKETS, 16384, 100})


def test_a_run_over_torch_path_buckets_of_a_fused_module_says_it_is_fused(tmp_path, capsys):
    """Re-running over buckets whose default is the torch path (a large batch of a wide MLP)
    on a module whose other buckets run kernels: the module is still fused, and mlpgen does
    not say that no kernel fits."""
    args = ["--widths", "2048,16", "--out", str(tmp_path), "--no-tune", "--json"]
    assert main(args) == 0
    capsys.readouterr()
    assert main([*args, "--batches", "262144"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["fused"] is True and "torch path" not in err


def test_show_names_each_buckets_training_step(tmp_path, capsys):
    """Under each bucket's forward row, the training step that won there (the kernels' tiles
    and options, the torch backward or cuBLASLt's GEMMs), its times, the torch backward's with
    the speedup where the kernels beat it, and a CUDA graph's step where it is another; a bucket
    never searched for training shows none."""
    from mlpgen.emit import entry, write_module
    from mlpgen.spec import KernelConfig, MLPSpec

    spec = MLPSpec((16, 32, 8), act="relu")
    path = tmp_path / f"{spec.name}.py"
    config = {"block_m": 16, "block_n": 32, "block_k": 64, "num_warps": 2, "num_stages": 4}
    config |= {"split": 4, "fused": True, "recompute": False, "one_pass": False}
    kernels = config | {"us": 50.0, "host_us": 300.0, "torch_us": 60.0, "torch_host_us": 600.0}
    table = {
        1: entry(KernelConfig("torch"), us=1.0) | {"train": kernels},
        16: entry(KernelConfig("torch"), us=1.0)
        | {"train": {"backward": "torch", "us": 61.0, "graph": config | {"us": 20.0}}},
        64: entry(KernelConfig("torch"), us=1.0) | {"train": {"backward": "cublaslt", "us": 9.5}},
        256: entry(KernelConfig("torch"), us=1.0),
    }
    write_module(path, spec, "GPU A|sm90|132", table, {"date": "D1", "trials": 40})
    capsys.readouterr()
    assert main(["show", str(path)]) == 0
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    steps = [line for line in lines if line.startswith("training step:")]
    assert steps == [
        "training step: kernels 16x32x64, warps 2, stages 4, split 4, fused  50.00 us GPU, "
        "300.00 us host (torch backward: 60.00 us GPU, 600.00 us host: 2.00x)",
        "training step: torch backward  61.00 us GPU; in a CUDA graph: kernels 16x32x64, "
        "warps 2, stages 4, split 4, fused  20.00 us GPU",
        "training step: cuBLASLt GEMMs  9.50 us GPU",
    ]
    assert lines.index(steps[0]) == 1 + next(i for i, s in enumerate(lines) if s.startswith("1 "))


def test_show_marks_cells_linked_by_pdl(tmp_path, capsys):
    """A cell whose calls are linked by programmatic dependent launch shows "(PDL)" after its
    kernel; the same kernel without it shows none, and the columns stay aligned."""
    from mlpgen.emit import entry, write_module
    from mlpgen.spec import KernelConfig, MLPSpec

    spec = MLPSpec((16, 32, 8), act="relu")
    path = tmp_path / f"{spec.name}.py"
    linked = KernelConfig("cluster", block_m=16, chunk=16, block_k=16, pdl=True)
    plain = KernelConfig("cluster", block_m=16, chunk=16, block_k=16)
    table = {1: entry(linked, us=1.0), 16: entry(plain, us=2.0)}
    write_module(path, spec, "GPU A|sm90|132", table, {"date": "D1", "trials": 40})
    capsys.readouterr()
    assert main(["show", str(path)]) == 0
    rows = [ln for ln in capsys.readouterr().out.splitlines() if "_k_cluster_m16_c16_k16" in ln]
    assert len(rows) == 2
    assert rows[0].split()[:2] == ["1", "_k_cluster_m16_c16_k16"] and "(PDL)" in rows[0]
    assert "(PDL)" not in rows[1] and rows[0].index(" 4 ") == rows[1].index(" 4 ")
    assert load_module(path).TUNED["GPU A|sm90|132"][1]["pdl"] is True


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_show_finds_no_damage_in_the_shipped_modules(path, capsys):
    """The checks that refuse damaged modules pass every module mlpgen ships (their per-layer
    kernels are named <kernel>_l0, _l1, ...)."""
    assert main(["show", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(path.stem + ":") and err == ""
