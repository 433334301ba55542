"""What trial logs (mlpgen.trial_log) show about the search: the comparison of a budgeted search
with an exhaustive one (`python -m mlpgen.trials compare EXHAUSTIVE SEARCH`), and the replay of
the tuner's search against an exhaustive log's recorded measurements, on any machine
(`python -m mlpgen.trials replay EXHAUSTIVE --trials N --seeds K`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import optuna

from mlpgen.emit import entry
from mlpgen.measure import Measurement
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.trial_log import config_text
from mlpgen.tune import Job, Progress, TuneOptions, pick_winner, search

# ---------------------------------------------------------------------------------------------
# Comparing a budgeted search with an exhaustive one


def bucket_records(bucket_log: dict) -> list:
    """(config, Measurement) of every measured trial of one bucket of a trial log."""
    return [
        (KernelConfig.from_dict(t["config"]), Measurement.from_dict(t))
        for t in bucket_log["trials"]
        if "verdict" in t
    ]


def judge(bucket_log: dict):
    """(the exhaustive winner, score(config)) for one bucket of an exhaustive log: both by the
    tuner's one score (Measurement.score, pick_winner) over that run's own measurements, so a
    searched winner is judged on the same numbers as the exhaustive one."""
    records = bucket_records(bucket_log)
    by_config = {c: m for c, m in records if m.ok}

    def score(config: KernelConfig) -> float | None:
        m = by_config.get(config)
        return None if m is None else m.score

    return pick_winner(records), score


def compare(exhaustive_log: Path, search_log: Path, buckets=None) -> list[dict]:
    """Per bucket and GPU: the searched winner's score as the exhaustive run measured it,
    against the exhaustive winner's, and the share of the space the search measured. Using the
    exhaustive run's own measurements of both configs keeps run-to-run noise out of the ratio;
    scores are the tuner's (Measurement.score), the exhaustive winner is the tuner's pick."""
    full = json.loads(Path(exhaustive_log).read_text())["gpus"]
    part = json.loads(Path(search_log).read_text())["gpus"]
    rows = []
    for key in sorted(set(full) & set(part)):
        for b in sorted(set(full[key]["buckets"]) & set(part[key]["buckets"]), key=int):
            if buckets and int(b) not in buckets:
                continue
            fb, pb = full[key]["buckets"][b], part[key]["buckets"][b]
            best, score = judge(fb)
            found = pb["winner"] and score(KernelConfig.from_dict(pb["winner"]))
            best_score = best and score(best[0])
            row = {
                "gpu": key,
                "bucket": int(b),
                "exhaustive_measured": fb["measured"],
                "search_measured": pb["measured"],
                "share": round(pb["measured"] / max(1, fb["measured"]), 3),
                "exhaustive_winner": best and config_text(entry(best[0])),
                "search_winner": pb["winner"] and config_text(pb["winner"]),
                "exhaustive_score": best_score and round(best_score, 3),
                "search_score_in_exhaustive": found and round(found, 3),
                "search_score_own_run": pb["winner"] and pb["winner"]["score"],
            }
            if best_score and found:
                row["ratio"] = round(found / best_score, 4)
            rows.append(row)
    return rows


def recorded_measure(log: dict, key: str):
    """A `measure(bucket, config)` that answers from an exhaustive trial log instead of a GPU:
    the tuner's search then runs exactly as on the GPU, over the same numbers every time. Also
    {bucket: the configs measured}: the space the log covers."""
    table = {}
    for b, rec in log["gpus"][key]["buckets"].items():
        for t in rec["trials"]:
            if "verdict" in t:
                config = KernelConfig.from_dict(t["config"])
                table[(int(b), config)] = Measurement.from_dict(t)

    def measure(bucket: int, config: KernelConfig):
        found = table.get((bucket, config))
        return found if found is not None else Measurement("error", "not in the recorded log")

    covered: dict[int, set] = {}
    for b, config in table:
        covered.setdefault(b, set()).add(config)
    return measure, covered


def replay(log_path: Path, trials: int, seeds: int, buckets=None) -> list[dict]:
    """Per GPU, bucket and seed: the winner of a `trials`-budget search replayed on the
    exhaustive log's measurements, against the exhaustive winner's score."""
    log = json.loads(Path(log_path).read_text())
    spec = MLPSpec.from_dict(log["spec"])
    rows = []
    for key, gpu in sorted(log["gpus"].items()):
        chosen = sorted(int(b) for b in gpu["buckets"] if not buckets or int(b) in buckets)
        measure, covered = recorded_measure(log, key)
        for seed in range(seeds):
            options = TuneOptions(buckets=tuple(chosen), trials=trials, seed=seed)
            # over the space the log measured (today's may have grown since); what fitted in
            # the GPU's shared memory is in its measurements, so no limit of ours prunes it
            results = search(
                Job(spec, key, options, recorded=covered, max_shared=1 << 30, clusters=True),
                [measure],
                optuna.storages.InMemoryStorage(),
                Progress(0, enabled=False, quiet=True),
            )
            for b, r in sorted(results.items()):
                best, score = judge(gpu["buckets"][str(b)])
                win = r.winner
                rows.append(
                    {
                        "gpu": key,
                        "bucket": b,
                        "seed": seed,
                        "measured": r.measured,
                        "space": len(r.plan.space.candidates),
                        "winner": win and config_text(entry(win[0])),
                        "ratio": win and round(score(win[0]) / score(best[0]), 4),
                    }
                )
    return rows


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(
        prog="python -m mlpgen.trials",
        description="compare EXHAUSTIVE.trials.json SEARCH.trials.json: how close a budgeted "
        "search came to the exhaustive winner, per bucket",
    )
    p.add_argument("command", choices=["compare", "replay"])
    p.add_argument("exhaustive")
    p.add_argument("search", nargs="?", help="compare: the budgeted search's trial log")
    p.add_argument("--buckets", default=None, help="e.g. 64,16384 (default: all in both)")
    p.add_argument("--trials", type=int, default=None, help="replay: the search's budget")
    p.add_argument("--seeds", type=int, default=10, help="replay: sampler seeds 0..N-1")
    args = p.parse_args(argv)
    buckets = {int(b) for b in args.buckets.split(",")} if args.buckets else None
    if args.command == "replay":
        if args.trials is None:
            p.error("replay needs --trials")
        rows = replay(Path(args.exhaustive), args.trials, args.seeds, buckets)
        for r in rows:
            print(
                f"{r['gpu']}  bucket {r['bucket']:>6}  seed {r['seed']}: {r['measured']}/"
                f"{r['space']} measured, winner {r['winner']} at {100 * (r['ratio'] - 1):+.1f}%"
            )
        print(json.dumps(rows, indent=1))
        return 0
    if args.search is None:
        p.error("compare needs EXHAUSTIVE and SEARCH trial logs")
    rows = compare(Path(args.exhaustive), Path(args.search), buckets)
    for r in rows:
        ratio = r.get("ratio")
        print(
            f"{r['gpu']}  bucket {r['bucket']:>6}: search {r['search_measured']}/"
            f"{r['exhaustive_measured']} measured ({100 * r['share']:.0f}%), winner "
            f"{r['search_winner']} at "
            + (f"{100 * (ratio - 1):+.1f}%" if ratio is not None else "?")
            + f" of the exhaustive winner {r['exhaustive_winner']} "
            f"({r['exhaustive_score']} us)"
        )
    print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
