"""The tuner's search replayed on recorded H200 measurements (production search space): the
search proposes, the log answers with the recorded score. The held-out log is the wide spec's
exhaustive one (1024,4096,1024 gelu_tanh bf16 at 1, 64, 4096 and 65536 rows, every feasible
candidate measured once): the search's settings were chosen on the headline's log, and no seed
of the search is drawn from any log (the heuristic default, the torch path and the best of the
neighbouring buckets of the same search are its only seeds)."""

import json
from pathlib import Path

from mlpgen.trials import ablation, main, replay, within

ROOT = Path(__file__).resolve().parents[1]
EXHAUSTIVE = ROOT / "benchmarks/results/h200/exhaustive"
HELD_OUT = EXHAUSTIVE / "mlp_1024x4096x1024_gelu_tanh_bf16.trials.json"
NARROW = EXHAUSTIVE / "mlp_64x64x64x64x64x3_relu_fp16.trials.json"
SHARE = 0.25  # the budget: a quarter of each bucket's space
SEEDS = 5


def test_replayed_search_meets_the_bar_on_a_held_out_log():
    """With a quarter of each space the searched winner is within 3% of the exhaustive best in
    at least 90% of the (bucket, sampler seed) cases, at every bucket of the log."""
    rows = replay(HELD_OUT, seeds=SEEDS, share=SHARE)
    assert {r["bucket"] for r in rows} == {1, 64, 4096, 65536} and len(rows) == 4 * SEEDS
    for r in rows:
        assert r["measured"] <= SHARE * r["space"] and r["ratio"] >= 1.0
    assert within(rows) >= 0.9


def test_the_ablation_table_and_the_per_bucket_table(tmp_path, capsys):
    cells = tmp_path / "replay.json"
    assert main(["ablation", str(NARROW), "--seeds", "2", "--json", "--cells", str(cells)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed) == {"title", "command", "header", "rows", "note"}
    assert [row[1] for row in printed["rows"]] == ["random", "local+tpe"] * 2  # the log, all
    assert len(printed["header"]) == len(printed["rows"][0])
    assert "--share 0.25" in printed["command"] and f"--cells {cells}" in printed["command"]
    per_bucket = json.loads(cells.read_text())
    assert [row[1] for row in per_bucket["rows"]] == [1, 64, 4096, 65536]
    assert all(len(row) == len(per_bucket["header"]) for row in per_bucket["rows"])
    # the per-bucket table is the search's rows of the same replay
    again = ablation([NARROW], seeds=2, share=SHARE)
    assert again["rows"] == printed["rows"] and again["cells"]["rows"] == per_bucket["rows"]
