"""benchmarks/compare_modules.py's shipping rule: a re-tune replaces a shipped module only where
it is nowhere slower than the limit, rows where both run the same code excepted (the same config
rendered by the same templates: their ratio is the measurement's noise)."""

import importlib.util
import json
import re
from pathlib import Path
from types import SimpleNamespace

from mlpgen.emit import DEFAULT_KEY, default_table, module_path, read_module, write_module
from mlpgen.spec import MLPSpec
from mlpgen.trial_log import trial_log_path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location(
    "compare_modules", ROOT / "benchmarks/compare_modules.py"
)
compare_modules = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_modules)

HEADER = ["module", "batch", "eager µs", "previous µs", "runtime µs", "public µs"]
HEADER += ["runtime / previous", "public / previous", "same code"]


def row(name, batch, ratio, same):
    return [
        name,
        str(batch),
        "40.0",
        "10.0",
        f"{10 * ratio:.2f}",
        "60.0",
        f"{ratio:.3f}",
        "6.0",
        same,
    ]


def test_a_retune_ships_only_where_no_batch_is_slower_than_the_limit():
    rows = [row("faster", 1, 0.95, "no"), row("faster", 262144, 1.02, "no")]
    rows += [row("slower", 1, 0.90, "no"), row("slower", 16384, 1.138, "no")]
    # the same code in both modules: 6% is the measurement's noise, not the re-tune's
    rows += [row("noise", 1, 0.99, "no"), row("noise", 262144, 1.06, "yes")]
    verdicts = compare_modules.ship_verdicts({"header": HEADER, "rows": rows}, 1.03)
    assert verdicts == {"faster": True, "slower": False, "noise": True}
    assert compare_modules.ship_verdicts({"header": HEADER, "rows": rows}, 1.2)["slower"]


def test_the_same_config_is_the_same_code_only_from_the_same_templates(tmp_path):
    """A config the old module ran before a template change may run differently now: its ratio
    is no measurement of noise, and the row counts."""
    shipped = ROOT / "tuned/mlp_64x64x64x64x64x3_relu_fp16.py"
    lines = shipped.read_text().split("\n")
    older = tmp_path / shipped.name
    older.write_text(
        "\n".join(
            [lines[0], re.sub(r"templates: \w+", "templates: 0123abcd", lines[1])] + lines[2:]
        )
    )
    cell = {"strategy": "rowblock", "block_m": 16, "chunk": 64, "num_warps": 4}

    def module(path, cell):
        return SimpleNamespace(
            __file__=str(path), gpu_key=lambda: "GPU", config_for=lambda m, k: cell
        )

    assert compare_modules.same_call(module(shipped, cell), module(shipped, dict(cell)), 64)
    assert not compare_modules.same_call(module(shipped, cell), module(older, cell), 64)
    other = cell | {"block_m": 64}
    assert not compare_modules.same_call(module(shipped, cell), module(shipped, other), 64)


def test_a_run_over_some_modules_keeps_the_other_modules_rows():
    """Shipped modules can be re-tuned a few at a time: the stored table keeps each module's
    latest rows; a table of other columns (another method) is replaced whole."""
    earlier = {"header": HEADER, "rows": [row("a", 1, 1.0, "no"), row("b", 1, 0.9, "no")]}
    now = {"header": HEADER, "rows": [row("b", 64, 1.1, "no"), row("b", 1, 1.2, "no")]}
    rows = compare_modules.merged(now, earlier)["rows"]
    assert [(r[0], r[1], r[6]) for r in rows] == [
        ("a", "1", "1.000"),
        ("b", "1", "1.200"),
        ("b", "64", "1.100"),
    ]
    other = {"header": HEADER[:-1], "rows": [row("a", 1, 1.0, "no")[:-1]]}
    assert compare_modules.merged(now, other) == now


H200, H100 = "NVIDIA H200|sm90|132", "NVIDIA H100 80GB HBM3|sm90|132"


def gpu_module(folder: Path, spec, key: str, us: float) -> Path:
    """A module of `spec` in `folder` with a table for GPU `key`, and its trial log."""
    table = {b: cell | {"us": us} for b, cell in default_table(spec, (1, 64)).items()}
    path = write_module(module_path(folder, spec), spec, key, table, {"torch": key})
    log_path = trial_log_path(path)
    log = json.loads(log_path.read_text()) if log_path.exists() else {"spec": spec.to_dict()}
    log.setdefault("gpus", {})[key] = {"buckets": {}, "provenance": {}}
    log_path.write_text(json.dumps(log))
    return path


def test_ship_gives_the_passing_retunes_gpu_entries_and_keeps_other_gpus(tmp_path, monkeypatch):
    """--ship puts a passing re-tune's GPU entries (module and trial log) into the shipped
    module, keeping the entries of other GPUs there, and leaves a failing one alone; --merge
    keeps the stored rows of modules not compared now."""
    old, new = tmp_path / "tuned", tmp_path / "retuned"
    specs = {k: MLPSpec((8, w, 8), "relu", dtype="fp16") for k, w in (("good", 16), ("bad", 24))}
    for spec in specs.values():
        gpu_module(old, spec, H200, 10.0)
        gpu_module(new, spec, H200, 9.0)
        gpu_module(new, spec, H100, 8.0)
    good, bad = (module_path(old, specs[k]) for k in ("good", "bad"))
    before = bad.read_text(), trial_log_path(bad).read_text()
    table = tmp_path / "retuned.json"
    table.write_text(json.dumps({"header": HEADER, "rows": [row("mlp_other", 1, 0.5, "no")]}))
    ratios = {good.stem: 1.01, bad.stem: 1.2}
    monkeypatch.setattr(
        compare_modules, "compare", lambda o, n, batches: [row(n.stem, 1, ratios[n.stem], "no")]
    )
    args = [str(old), str(new), "--batches", "1", "--json", str(table), "--merge", "--ship", "1.03"]
    assert compare_modules.main(args) == 0
    _, tuned, prov = read_module(good)
    assert {k: v[1]["us"] for k, v in tuned.items() if k != DEFAULT_KEY} == {
        H200: 9.0,
        H100: 8.0,
    }
    assert prov[H100]["torch"] == H100 and prov[H200]["torch"] == H200
    assert set(json.loads(trial_log_path(good).read_text())["gpus"]) == {H200, H100}
    assert (bad.read_text(), trial_log_path(bad).read_text()) == before
    stored = json.loads(table.read_text())
    assert [r[0] for r in stored["rows"]] == sorted([bad.stem, good.stem, "mlp_other"])
    assert stored["command"].endswith("--merge --ship 1.03")


def test_ship_keeps_the_shipped_training_steps_a_retune_did_not_search(tmp_path):
    """A cold re-tune without --train has no training cells: shipping it keeps the shipped
    module's (each bucket's "train" value, the train search's provenance and its trials), as an
    in-place re-tune does; a bucket the re-tune did search keeps the re-tune's."""
    old, new = tmp_path / "tuned", tmp_path / "retuned"
    spec = MLPSpec((8, 16, 8), "relu", dtype="fp16")
    shipped = gpu_module(old, spec, H200, 10.0)
    kernels = {"block_m": 16, "block_n": 16, "block_k": 16, "us": 7.0}
    _, tuned, prov = read_module(shipped)
    table = {1: tuned[H200][1] | {"train": kernels}, 64: tuned[H200][64] | {"train": kernels}}
    write_module(shipped, spec, H200, table, prov[H200] | {"train": {"seconds": 5.0}})
    log = json.loads(trial_log_path(shipped).read_text())
    log["gpus"][H200]["train"] = {"buckets": {"64": {"measured": 3}}}
    trial_log_path(shipped).write_text(json.dumps(log))
    retune = gpu_module(new, spec, H200, 9.0)
    _, tuned, prov = read_module(retune)
    searched = {"backward": "torch", "us": 8.0}
    table = tuned[H200] | {1: tuned[H200][1] | {"train": searched}}
    write_module(retune, spec, H200, table, prov[H200])
    compare_modules.ship(retune, shipped)
    _, tuned, prov = read_module(shipped)
    assert tuned[H200][64]["us"] == 9.0 and tuned[H200][64]["train"] == kernels
    assert tuned[H200][1]["us"] == 9.0 and tuned[H200][1]["train"] == searched
    assert prov[H200]["train"] == {"seconds": 5.0}
    log = json.loads(trial_log_path(shipped).read_text())["gpus"][H200]
    assert log["train"] == {"buckets": {"64": {"measured": 3}}} and "buckets" in log
