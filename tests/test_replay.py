"""The tuner's search replayed on recorded H200 measurements (production search space)."""

from pathlib import Path

from mlpgen.trials import replay

H200_LOG = Path(__file__).parent / "fixtures" / "h200_exhaustive_64_16384.trials.json"


def test_replayed_h200_search_gets_within_3_percent_with_30_percent_of_the_trials():
    """The search itself, replayed on the H200's exhaustive measurements of buckets 64 and
    16384 (every candidate measured once there): with 16 trials (<= 30% of either space) the
    winner scores within 3% of the exhaustive winner, for several sampler seeds."""
    rows = replay(H200_LOG, trials=16, seeds=10)
    assert {r["bucket"] for r in rows} == {64, 16384}
    for r in rows:
        assert r["measured"] == 16 and r["measured"] <= 0.3 * r["space"]
        assert r["ratio"] <= 1.03, r
