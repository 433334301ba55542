"""What trial logs (mlpgen.trial_log) show about the search: the comparison of a budgeted search
with an exhaustive one (`python -m mlpgen.trials compare EXHAUSTIVE SEARCH`), the replay of
the tuner's search against a log's recorded measurements, on any machine
(`python -m mlpgen.trials replay LOG --share 0.25 --seeds K`), and that replay against random
sampling (`python -m mlpgen.trials ablation LOG... --json`)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import optuna

from mlpgen.decide import pick_never_slower
from mlpgen.emit import entry
from mlpgen.measure import HIDDEN_WEIGHT, Measurement
from mlpgen.spec import KernelConfig, MLPSpec, SpecError
from mlpgen.trial_log import config_text
from mlpgen.tune import Job, Progress, TuneOptions, search

# ---------------------------------------------------------------------------------------------
# Comparing a budgeted search with an exhaustive one


def bucket_records(bucket_log: dict) -> list:
    """(config, Measurement) of every trial the search measured in one bucket of a trial log
    (not the PDL pass's; not configs of strategies mlpgen no longer has)."""
    out = []
    for t in bucket_log["trials"]:
        if "verdict" in t and t.get("state") != "pdl":
            try:
                out.append((KernelConfig.from_dict(t["config"]), Measurement.from_dict(t)))
            except SpecError:
                continue
    return out


def judge(bucket_log: dict):
    """(the exhaustive winner, score(config)) for one bucket of an exhaustive log: both by the
    tuner's one score (Measurement.score, pick_winner) over that run's own measurements, so a
    searched winner is judged on the same numbers as the exhaustive one."""
    records = bucket_records(bucket_log)
    by_config = {c: m for c, m in records if m.ok}

    def score(config: KernelConfig) -> float | None:
        m = by_config.get(config)
        return None if m is None else m.score

    eager = next(((c, m) for c, m in records if c.strategy == "torch" and m.ok), None)
    return pick_never_slower(records, eager), score


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
        for config, m in bucket_records(rec):
            table[(int(b), config)] = m

    def measure(bucket: int, config: KernelConfig):
        found = table.get((bucket, config))
        return found if found is not None else Measurement("error", "not in the recorded log")

    covered: dict[int, set] = {}
    for b, config in table:
        covered.setdefault(b, set()).add(config)
    return measure, covered


def replay(
    log_path: Path,
    trials: int | None = None,
    seeds: int = 10,
    buckets=None,
    share: float | None = None,
    sampler: str = "tpe",
    min_space: int = 0,
    default_budget: bool = False,
) -> list[dict]:
    """Per GPU, bucket and seed: the winner of a search replayed on the log's measurements
    against the log's best by the tuner's rules. One search per GPU and seed tunes all the
    chosen buckets together, as a live tune does (round-robin, each bucket seeded with its
    neighbours' best so far), through the tuner's own `search`. The budget: `trials` per
    bucket, or `share` of each bucket's space (at least 1), or with `default_budget` the
    tuner's default rule (tune.budget: a share within a floor and a cap); `sampler`:
    TuneOptions.sampler. A log that is not exhaustive is a smaller space: the configs it
    measured; buckets with fewer than `min_space` are left out."""
    log = json.loads(Path(log_path).read_text())
    spec = MLPSpec.from_dict(log["spec"])
    rows = []
    for key, gpu in sorted(log["gpus"].items()):
        measure, covered = recorded_measure(log, key)
        judged = {}
        for b in sorted(int(b) for b in gpu["buckets"] if not buckets or int(b) in buckets):
            best, score = judge(gpu["buckets"][str(b)])
            if best is not None and len(covered.get(b, ())) >= min_space:
                judged[b] = best, score
        if not judged:
            continue
        # recheck=0, share=False: judged is the search's own winner, by the one score
        options = TuneOptions(
            buckets=tuple(judged), trials=trials, recheck=0, share=False, sampler=sampler
        )
        if not default_budget:
            options = replace(options, budget_share=share or 0.0, budget_range=(1, None))
        for seed in range(seeds):
            # over the space the log measured (today's may have grown since); what fitted
            # in the GPU's shared memory is in its measurements, so no limit of ours prunes
            results = search(
                Job(
                    spec,
                    key,
                    replace(options, seed=seed),
                    recorded=covered,
                    max_shared=1 << 30,
                    clusters=True,
                ),
                [measure],
                optuna.storages.InMemoryStorage(),
                Progress(0, enabled=False, quiet=True),
            )
            for b, (best, score) in judged.items():
                r = results[b]
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
    rows.sort(key=lambda r: (r["gpu"], r["bucket"], r["seed"]))
    return rows


def within(rows: list[dict], tolerance: float = 0.03) -> float:
    """The share of replayed searches whose winner is within `tolerance` of the best."""
    return sum(r["ratio"] is not None and r["ratio"] <= 1 + tolerance for r in rows) / len(rows)


def summary(rows: list[dict]) -> list:
    """[within 3%, mean excess, worst excess, share of the spaces measured] of replayed rows."""
    excess = [100 * (r["ratio"] - 1) for r in rows if r["ratio"] is not None]
    return [
        f"{100 * within(rows):.0f}%",
        f"{sum(excess) / len(excess):+.2f}%",
        f"{max(excess):+.1f}%",
        f"{sum(r['measured'] for r in rows) / sum(r['space'] for r in rows):.0%}",
    ]


def log_name(path) -> str:
    return f"{Path(path).parent.name}/{Path(path).name.removesuffix('.trials.json')}"


def ablation(
    logs,
    seeds: int = 10,
    share: float = 0.25,
    min_space: int = 0,
    default_budget: bool = False,
    cells: str | None = None,
) -> dict:
    """Random sampling against the tuner's search (local steps and TPE), replayed on each log
    with the same budget (`share` of each bucket's space) and seeds: per log and sampler, the
    share of (bucket, seed) searches within 3% of the best and the mean and worst excess, over
    the buckets whose recorded space holds at least `min_space` configs. `default_budget`: the
    budget is the live tuner's default rule (tune.budget) instead of `share`; `cells`: where
    the command writes the per-bucket table (for the command's text).
    Returns a table for benchmarks/render.py ({title, command, header, rows, note}), and under
    "cells" the tuner's search per (log, bucket): the held-out replay table, in the same form."""
    table, per_bucket = [], []
    every: dict[str, list] = {"random": [], "tpe": []}
    for name, path in [(log_name(p), p) for p in logs] + [("all", None)]:
        for sampler in ("random", "tpe"):
            if path is None:
                rows = every[sampler]
            else:
                rows = replay(
                    Path(path),
                    seeds=seeds,
                    share=share,
                    sampler=sampler,
                    min_space=min_space,
                    default_budget=default_budget,
                )
                every[sampler] += [dict(r, log=name) for r in rows]
            if not rows:
                continue
            buckets = sorted({r["bucket"] for r in rows})
            if sampler == "tpe" and path is not None:
                for b in buckets:
                    mine = [r for r in rows if r["bucket"] == b]
                    per_bucket.append(
                        [name, b, mine[0]["space"], mine[0]["measured"], *summary(mine)]
                    )
            table.append(
                [
                    name,
                    "local+tpe" if sampler == "tpe" else sampler,
                    len({(r.get("log"), r["bucket"]) for r in rows}),
                    len(rows),
                    *summary(rows),
                ]
            )
    command = (
        f"python -m mlpgen.trials ablation {' '.join(str(p) for p in logs)} "
        f"--seeds {seeds} "
        + ("--default-budget" if default_budget else f"--share {share}")
        + " --json"
        + (f" --cells {cells}" if cells else "")
    )
    how = (
        "Each search is replayed on a trial log's recorded H200 measurements (the log answers "
        "what the search proposes) with a budget of "
        + (
            "the tuner's default (a quarter of each bucket's space, 12 to 48)"
            if default_budget
            else f"{share:.0%} of each bucket's space (the configs the log measured)"
        )
        + f", sampler seeds "
        f"0-{seeds - 1}; one search tunes a log's buckets together, in the tuner's order, as a "
        "live tune does. Excess: the searched winner's score over the log's best, both the "
        "tuner's one score (the larger of a call's GPU and host time plus "
        f"{HIDDEN_WEIGHT:g} times the smaller) on the log's own numbers. The search's seeds "
        "are the heuristic "
        "default, the torch path and the best configs of the neighbouring buckets of the same "
        "search, none drawn from a log, then one random config of each launch kind not yet "
        "measured; the climb's settings (tune.POLISH_SHARE, POLISH_BAND) and that draw were "
        "chosen on the headline log's replay, so the narrow and wide logs are the held-out ones."
    )
    held_out = {
        "title": "Held-out replay: the tuner's search per spec and bucket",
        "command": command,
        "header": [
            "log",
            "bucket",
            "space",
            "measured",
            "within 3%",
            "mean excess",
            "worst",
            "share",
        ],
        "rows": per_bucket,
        "note": how,
    }
    return {
        "title": "Search against random sampling, replayed on recorded measurements",
        "command": command,
        "header": [
            "log",
            "sampler",
            "buckets",
            "searches",
            "within 3%",
            "mean excess",
            "worst",
            "measured",
        ],
        "rows": table,
        "note": how + " Random: uniform proposals after the same first candidates.",
        "cells": held_out,
    }


def print_table(table: dict) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(table["header"], *table["rows"])]
    for row in [table["header"], *table["rows"]]:
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths)))


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(
        prog="python -m mlpgen.trials",
        description="What trial logs show about the search: compare a budgeted search with an "
        "exhaustive one, replay the search on a log, or replay it against random sampling",
    )
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compare", help="a budgeted search's winners against an exhaustive log")
    c.add_argument("exhaustive")
    c.add_argument("search", help="the budgeted search's trial log")
    r = sub.add_parser("replay", help="the search replayed on a log's measurements")
    r.add_argument("exhaustive")
    r.add_argument("--trials", type=int, default=None, help="the search's budget per bucket")
    r.add_argument("--share", type=float, default=None, help="or this share of each space")
    a = sub.add_parser("ablation", help="random sampling against the search, replayed on logs")
    a.add_argument("logs", nargs="+")
    a.add_argument("--share", type=float, default=0.25, help="budget: share of each space")
    a.add_argument("--json", action="store_true", help="the table as JSON (benchmarks/render)")
    a.add_argument("--cells", default=None, help="write the per-bucket table (JSON) here too")
    a.add_argument(
        "--default-budget", action="store_true", help="the tuner's default budget, not --share"
    )
    for q in (c, r):
        q.add_argument("--buckets", default=None, help="e.g. 64,16384 (default: all)")
    for q in (r, a):
        q.add_argument("--seeds", type=int, default=10, help="sampler seeds 0..N-1")
    args = p.parse_args(argv)
    if args.command == "ablation":
        table = ablation(
            args.logs, args.seeds, args.share, default_budget=args.default_budget, cells=args.cells
        )
        cells = table.pop("cells")
        if args.cells:
            Path(args.cells).write_text(json.dumps(cells, indent=1) + "\n")
        if args.json:
            print(json.dumps(table, indent=1))
        else:
            print_table(table)
        return 0
    buckets = {int(b) for b in args.buckets.split(",")} if args.buckets else None
    if args.command == "replay":
        if (args.trials is None) == (args.share is None):
            p.error("replay needs --trials or --share")
        rows = replay(Path(args.exhaustive), args.trials, args.seeds, buckets, args.share)
        for r in rows:
            print(
                f"{r['gpu']}  bucket {r['bucket']:>6}  seed {r['seed']}: {r['measured']}/"
                f"{r['space']} measured, winner {r['winner']} at {100 * (r['ratio'] - 1):+.1f}%"
            )
        print(json.dumps(rows, indent=1))
        return 0
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
