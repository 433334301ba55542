"""The trial log beside a module (<name>.trials.json): every candidate of every bucket with its
verdict and times, per GPU; and the comparison of a budgeted search with an exhaustive one that
BENCHMARKS.md reports (`python -m mlpgen.trials compare EXHAUSTIVE SEARCH`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mlpgen.emit import atomic_write, entry, lock_for
from mlpgen.space import DOMAINS
from mlpgen.spec import KernelConfig, MLPSpec


def trial_log_path(module: Path) -> Path:
    return Path(module).with_suffix(".trials.json")


def write_trial_log(module: Path, spec: MLPSpec, key: str, provenance: dict, results: dict) -> Path:
    """Merge this GPU's trials into <name>.trials.json (other GPUs and buckets kept)."""
    path = trial_log_path(module)
    with lock_for(path):
        log = {}
        if path.exists():
            try:
                log = json.loads(path.read_text())
            except (OSError, ValueError):
                log = {}
        log["spec"] = spec.to_dict()
        gpus = log.setdefault("gpus", {})
        gpu = gpus.setdefault(key, {})
        gpu["provenance"] = provenance
        table = gpu.setdefault("buckets", {})
        for b, r in results.items():
            win = None
            if r.winner is not None:
                c, m = r.winner
                win = entry(c, **m.times()) | {"score": round(m.score, 3)}
            table[str(b)] = {
                "study": r.plan.name,
                "sampler": r.plan.sampler_name,
                "candidates": len(r.plan.space.candidates),
                "dropped": len(r.plan.space.dropped),
                "dropped_by": r.plan.space.dropped_counts(),
                "measured": r.measured,
                "winner": win,
                "eager_us": None if r.eager is None else round(r.eager.us, 3),
                "trials": r.trials,
            }
        gpu["buckets"] = dict(sorted(table.items(), key=lambda kv: int(kv[0])))
        atomic_write(path, json.dumps(log, indent=1, sort_keys=True) + "\n")
    return path


def config_text(cell: dict) -> str:
    """A TUNED cell's searched fields, e.g. "rowblock block_m=32 chunk=64 num_warps=8"."""
    fields = DOMAINS.get(cell["strategy"], {})
    return " ".join([cell["strategy"]] + [f"{n}={cell[n]}" for n in fields if n in cell])


# ---------------------------------------------------------------------------------------------
# Comparing a budgeted search with an exhaustive one (BENCHMARKS.md)


def compare(exhaustive_log: Path, search_log: Path, buckets=None) -> list[dict]:
    """Per bucket and GPU: the searched winner's score as the exhaustive run measured it,
    against the exhaustive winner's, and the share of the space the search measured. Using the
    exhaustive run's own measurement of both configs keeps run-to-run noise out of the ratio."""
    full = json.loads(Path(exhaustive_log).read_text())["gpus"]
    part = json.loads(Path(search_log).read_text())["gpus"]
    rows = []
    for key in sorted(set(full) & set(part)):
        for b in sorted(set(full[key]["buckets"]) & set(part[key]["buckets"]), key=int):
            if buckets and int(b) not in buckets:
                continue
            fb, pb = full[key]["buckets"][b], part[key]["buckets"][b]
            scores = {
                json.dumps(KernelConfig.from_dict(t["config"]).to_dict(), sort_keys=True): t
                for t in fb["trials"]
                if t.get("verdict") == "ok"
            }
            found = pb["winner"] and scores.get(
                json.dumps(KernelConfig.from_dict(pb["winner"]).to_dict(), sort_keys=True)
            )
            best = fb["winner"]
            row = {
                "gpu": key,
                "bucket": int(b),
                "exhaustive_measured": fb["measured"],
                "search_measured": pb["measured"],
                "share": round(pb["measured"] / max(1, fb["measured"]), 3),
                "exhaustive_winner": best and config_text(best),
                "search_winner": pb["winner"] and config_text(pb["winner"]),
                "exhaustive_score": best and best["score"],
                "search_score_in_exhaustive": found["score"] if found else None,
                "search_score_own_run": pb["winner"] and pb["winner"]["score"],
            }
            if best and found:
                row["ratio"] = round(found["score"] / best["score"], 4)
            rows.append(row)
    return rows


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(
        prog="python -m mlpgen.trials",
        description="compare EXHAUSTIVE.trials.json SEARCH.trials.json: how close a budgeted "
        "search came to the exhaustive winner, per bucket",
    )
    p.add_argument("command", choices=["compare"])
    p.add_argument("exhaustive")
    p.add_argument("search")
    p.add_argument("--buckets", default=None, help="e.g. 64,16384 (default: all in both)")
    args = p.parse_args(argv)
    buckets = {int(b) for b in args.buckets.split(",")} if args.buckets else None
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
