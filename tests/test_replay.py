"""The tuner's search replayed on recorded H200 measurements (production search space), on a
log it was not tuned on: an exhaustive tune of the headline spec at 64 and 16384 rows, every
candidate measured once. No seed of the search is drawn from this (or any) log."""

import json
from pathlib import Path

from mlpgen.trials import ablation, main, replay, within

ROOT = Path(__file__).resolve().parents[1]
H200_LOG = ROOT / "benchmarks/results/h200/exhaustive/mlp_256x512x256_gelu_fp16.trials.json"
SHARE = 0.25  # the budget: a quarter of each bucket's space
SEEDS = 10


def test_replayed_search_on_a_held_out_exhaustive_log():
    """With a quarter of each space, the searched winner lands within 3% of the exhaustive best
    in half of the (bucket, sampler seed) cases: the target of 90% is not met without seeds
    fitted to the log (the misses: +9.1% at 16384 rows, where the search stays on the torch
    path, and +21-34% at 64 rows, where it stays on the default's strategy). Pinned at what
    holds, so that a change that makes the search worse fails here."""
    rows = replay(H200_LOG, seeds=SEEDS, share=SHARE)
    assert {r["bucket"] for r in rows} == {64, 16384} and len(rows) == 2 * SEEDS
    for r in rows:
        assert r["measured"] <= SHARE * r["space"] and r["ratio"] >= 1.0
    assert within(rows) >= 0.5
    assert all(r["ratio"] <= 1.0 for r in rows if r["bucket"] == 16384 and r["seed"] in (0, 1))
    assert max(r["ratio"] for r in rows) < 1.35


def test_the_search_beats_random_sampling_on_the_held_out_log():
    """The same budget and seeds with uniform random proposals: the search lands within 3%
    more often and is closer on average."""
    ours = replay(H200_LOG, seeds=SEEDS, share=SHARE)
    rand = replay(H200_LOG, seeds=SEEDS, share=SHARE, sampler="random")
    assert all(r["measured"] <= SHARE * r["space"] for r in rand)
    assert within(ours) > within(rand)
    assert sum(r["ratio"] for r in ours) < sum(r["ratio"] for r in rand)


def test_the_ablation_table_renders(capsys):
    table = ablation([H200_LOG], seeds=2, share=SHARE)
    assert [row[1] for row in table["rows"]] == ["random", "local+tpe"] * 2  # the log, all
    assert len(table["header"]) == len(table["rows"][0]) and "--share 0.25" in table["command"]
    assert main(["ablation", str(H200_LOG), "--seeds", "2", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed) == {"title", "command", "header", "rows", "note"}
    assert printed["rows"] == table["rows"]
