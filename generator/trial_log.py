"""The trial log beside a module (<name>.trials.json): every candidate of every bucket with its
verdict and times, per GPU, as the tuner writes it; `config_text` names a config in it."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

from mlpgen.emit import atomic_write, entry, lock_for
from mlpgen.space import DOMAINS
from mlpgen.spec import MLPSpec


def trial_log_path(module: Path) -> Path:
    return Path(module).with_suffix(".trials.json")


@contextmanager
def _updating(module: Path, spec: MLPSpec):
    """The module's trial log under its lock ({} where there is none, or it is unreadable), with
    the spec set; written back atomically when the block ends."""
    path = trial_log_path(module)
    with lock_for(path):
        try:
            log = json.loads(path.read_text()) if path.exists() else {}
        except (OSError, ValueError):
            log = {}
        log["spec"] = spec.to_dict()
        yield log
        atomic_write(path, json.dumps(log, indent=1, sort_keys=True) + "\n")


def write_trial_log(module: Path, spec: MLPSpec, key: str, provenance: dict, results: dict) -> Path:
    """Merge this GPU's trials into <name>.trials.json (other GPUs and buckets kept)."""
    with _updating(module, spec) as log:
        gpus = log.setdefault("gpus", {})
        gpu = gpus.setdefault(key, {})
        gpu["provenance"] = provenance
        table = gpu.setdefault("buckets", {})
        for b, r in results.items():
            win = None
            if r.winner is not None:
                c, m = r.winner
                win = entry(c, **m.times()) | {"score": round(m.score, 3)}
                if m.spread is not None:
                    win["spread"] = round(m.spread, 4)
            eager = r.eager.eager_times()["eager_us"] if r.eager else None  # nn.Sequential's
            table[str(b)] = {
                "study": r.plan.name,
                "sampler": r.plan.sampler_name,
                "candidates": len(r.plan.space.candidates),
                "dropped": len(r.plan.space.dropped),
                "dropped_by": r.plan.space.dropped_counts(),
                "measured": r.measured,
                "winner": win,
                "graph_winner": r.graph and entry(r.graph[0], us=r.graph[1].us),
                "eager_us": None if eager is None else round(eager, 3),
                # the best few and the torch path measured again: their scores, median, spread
                "recheck": getattr(r, "recheck", []),
                # neighbours' winners measured here beside its own (decide.consolidate), and the
                # one taken where it tied and the module ships fewer kernels: from, to, medians
                "consolidate": getattr(r, "consolidate", []),
                "consolidated": getattr(r, "consolidated", None),
                "trials": r.trials,
            }
        gpu["buckets"] = dict(sorted(table.items(), key=lambda kv: int(kv[0])))
    return trial_log_path(module)


def write_train_log(module: Path, spec: MLPSpec, key: str, provenance: dict, results: dict) -> Path:
    """Merge this GPU's training-step search (mlpgen.train_tune) into <name>.trials.json, under
    gpus[key]["train"]: per bucket every candidate measured (its config, verdict and times), the
    winner and the re-measurements that decided it (other GPUs and buckets, and the forward's
    trials, kept)."""
    with _updating(module, spec) as log:
        train = log.setdefault("gpus", {}).setdefault(key, {}).setdefault("train", {})
        train["provenance"] = provenance
        table = train.setdefault("buckets", {})
        for b, r in results.items():
            win = None
            if r.winner is not None:
                choice, m = r.winner
                win = choice.to_dict() | {"score": round(m.score, 3)}
            table[str(b)] = {
                "measured": r.measured,
                "winner": win,
                "recheck": r.recheck,
                "trials": [c.to_dict() | m.to_dict() for c, m in r.pairs],
            }
        train["buckets"] = dict(sorted(table.items(), key=lambda kv: int(kv[0])))
    return trial_log_path(module)


def config_text(cell: dict) -> str:
    """A TUNED cell's searched fields, e.g. "rowblock block_m=32 chunk=64 num_warps=8"."""
    fields = DOMAINS.get(cell["strategy"], {})
    words = [cell["strategy"]] + [f"{n}={cell[n]}" for n in fields if n in cell]
    return " ".join(words + (["pdl"] if cell.get("pdl") else []))
