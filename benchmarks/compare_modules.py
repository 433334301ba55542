"""Per-call time of two builds of the same generated modules side by side, in one process.

    python benchmarks/compare_modules.py OLD_DIR [NEW_DIR] [--batches 1,64,1024] [--json FILE]
        [--title TEXT] [--note TEXT] [--merge] [--ship LIMIT]

For every module present in both folders (NEW_DIR defaults to tuned/): eager nn.Sequential, the
module in OLD_DIR, the module in NEW_DIR launching through mlpgen.runtime, and the same module
on triton's public launch path (MLPGEN_RUNTIME=0 while it is imported), all on the same weights
and input. Each contender is checked against the fp32 reference before it is timed; the timing
is mlpgen.timing.time_calls', the contenders interleaved over ROUNDS rounds (every other one
in reverse order) and the median taken. Ratios are over the old module's time. With --json the
table is written as a file that benchmarks/render.py renders ({title, command, header, rows,
note}). With --ship LIMIT each NEW module that is nowhere slower (ship_verdicts) gives the OLD
one its GPU entries and trial log entries (ship): how a re-tune of a shipped module is shipped.
Entries of other GPUs in the OLD module stay.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
from pathlib import Path

import torch

from mlpgen.bench import build_sequential
from mlpgen.emit import DEFAULT_KEY, atomic_write, read_module, write_module
from mlpgen.spec import KernelConfig
from mlpgen.timing import LOOPS, time_calls
from mlpgen.trial_log import trial_log_path
from mlpgen.verify import check, random_problem, reference

ROUNDS = 6  # even: as many rounds in reverse order as forward
BATCHES = (1, 64, 1024, 16384)


def load(path: Path, name: str, public: bool = False):
    """Import a module file under its own name; public=True hides mlpgen.runtime from it."""
    if public:
        os.environ["MLPGEN_RUNTIME"] = "0"
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        os.environ.pop("MLPGEN_RUNTIME", None)
    return mod


def batch_row(spec, mods: dict, m: int, rounds: int) -> list[str]:
    """One table row: each contender checked, then timed in interleaved rounds."""
    x, weights, biases = random_problem(spec, m, "cuda", seed=m)
    want = reference(spec, x, weights, biases)
    model = build_sequential(spec, weights, biases)
    calls = {"eager": lambda: model(x)}
    calls |= {k: (lambda mod=mod: mod.mlp(x, weights, biases)) for k, mod in mods.items()}
    with torch.no_grad():
        for name, call in calls.items():
            verdict = check(call(), want, spec.dtype)
            if not verdict.ok:
                raise SystemExit(f"{spec.name} at {m} rows: {name} is wrong: {verdict.reason}")
        loops = LOOPS * rounds  # each round: time_call's loops
        times = time_calls(calls, False, torch.cuda.synchronize, rounds, loops=loops)
    us = {k: t.host_us for k, t in times.items()}
    base = us["previous"]
    return [spec.name, str(m), *(f"{us[k]:.2f}" for k in calls)] + [
        f"{us['runtime'] / base:.3f}",
        f"{us['public'] / base:.2f}",
        "yes" if same_call(mods["previous"], mods["runtime"], m) else "no",
    ]


def same_call(old, new, m: int) -> bool:
    """Whether both modules run the same code for a call of m rows on this GPU (the same config,
    rendered by the same templates): then their times differ by the measurement's noise alone,
    which such rows show."""
    cells = [mod.config_for(m, mod.gpu_key()) for mod in (old, new)]
    same_config = len({KernelConfig.from_dict(c) for c in cells}) == 1
    return same_config and template_hash(old) == template_hash(new)


def template_hash(mod) -> str | None:
    """The templates' hash a generated module's header names (render.template_hash)."""
    found = re.search(r"templates: (\w+)", Path(mod.__file__).read_text().split("\n", 2)[1])
    return found and found.group(1)


def compare(old: Path, new: Path, batches, rounds: int = ROUNDS) -> list[list[str]]:
    spec = read_module(new)[0]
    mods = {
        "previous": load(old, f"previous_{spec.name}"),
        "runtime": load(new, f"runtime_{spec.name}"),
        "public": load(new, f"public_{spec.name}", public=True),
    }
    rows = []
    for m in batches:
        rows.append(batch_row(spec, mods, m, rounds))
        print(" | ".join(rows[-1]), file=sys.stderr)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old", type=Path)
    p.add_argument("new", type=Path, nargs="?", default=Path("tuned"))
    p.add_argument("--batches", default=",".join(map(str, BATCHES)))
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--title", default="Modules against their previous build")
    p.add_argument("--note", default="", help="a sentence the rendered table ends with")
    p.add_argument(
        "--merge",
        action="store_true",
        help="keep the rows of modules not compared now from the --json file's earlier runs",
    )
    p.add_argument(
        "--ship",
        type=float,
        default=None,
        metavar="LIMIT",
        help="copy each NEW module (and its trial log) over the OLD one where ship_verdicts "
        "allows it at this ratio, e.g. 1.03",
    )
    args = p.parse_args(argv)
    batches = [int(b) for b in args.batches.split(",")]
    rows = []
    for new in sorted(args.new.glob("mlp_*.py")):
        old = args.old / new.name
        if old.exists():
            rows += compare(old, new, batches)
    table = {
        "title": args.title,
        "command": f"python benchmarks/compare_modules.py {args.old} {args.new} "
        f"--batches {args.batches} --json {args.json}"
        + (" --merge" if args.merge else "")
        + (f" --ship {args.ship}" if args.ship is not None else ""),
        "header": [
            "module",
            "batch",
            "eager µs",
            "previous µs",
            "runtime µs",
            "public µs",
            "runtime / previous",
            "public / previous",
            "same code",
        ],
        "rows": rows,
        "note": (
            "µs per call, loops of calls each ended by one synchronize (mlpgen.timing), the "
            "median over the loops of "
            f"{ROUNDS} interleaved rounds, every other one in reverse order; 'previous': the "
            "module in OLD_DIR, 'runtime': the one in NEW_DIR launching through "
            "mlpgen.runtime, 'public': the same through triton's public launch; 'same code': "
            "both run one config, rendered by the same templates, at that batch, so its ratio is "
            "the noise. " + args.note
        ).strip(),
    }
    stored = table
    if args.json and args.merge and args.json.exists():
        stored = merged(table, json.loads(args.json.read_text()))
    if args.json:
        args.json.write_text(json.dumps(stored, indent=1) + "\n")
    if args.ship is not None:  # the modules compared now, not the rows kept from earlier runs
        for name, fine in sorted(ship_verdicts(table, args.ship).items()):
            if fine:
                ship(args.new / f"{name}.py", args.old / f"{name}.py")
            print(f"{name}: {'shipped' if fine else 'kept: a batch over the limit'}")
    return 0


def ship(new: Path, old: Path) -> None:
    """Put the GPU entries of module `new` (and of its trial log) into module `old`, replacing
    those GPUs' entries there and keeping every other GPU's. A bucket the re-tune searched no
    training step for keeps the old cell's (its "train" value, and the train search's
    provenance), as an in-place re-tune keeps it (tune.tune): the training step's winner does
    not depend on the forward cell."""
    spec, tuned, prov = read_module(new)
    _, shipped, shipped_prov = read_module(old)
    for key, table in tuned.items():
        if key == DEFAULT_KEY:
            continue
        before = shipped.get(key, {})
        kept = {
            b: before[b]["train"]
            for b in table
            if "train" not in table[b] and "train" in before.get(b, {})
        }
        table = {b: cell | ({"train": kept[b]} if b in kept else {}) for b, cell in table.items()}
        provenance = prov.get(key)
        if kept and "train" in shipped_prov.get(key, {}) and provenance is not None:
            provenance = {"train": shipped_prov[key]["train"]} | provenance
        write_module(old, spec, key, table, provenance, buckets=table)
    new_log, old_log = trial_log_path(new), trial_log_path(old)
    if new_log.exists():
        log = json.loads(old_log.read_text()) if old_log.exists() else {}
        fresh = json.loads(new_log.read_text())
        log["spec"] = fresh["spec"]
        for key, gpu in fresh["gpus"].items():  # the train search's trials, as its cells
            searched = log.get("gpus", {}).get(key, {}).get("train")
            if searched is not None and "train" not in gpu:
                gpu["train"] = searched
        log.setdefault("gpus", {}).update(fresh["gpus"])
        atomic_write(old_log, json.dumps(log, indent=1, sort_keys=True) + "\n")


def merged(table: dict, earlier: dict) -> dict:
    """`table` with the rows of the modules it does not compare taken from `earlier` (an
    earlier run's table of the same columns), by module and batch."""
    if earlier.get("header") != table["header"]:
        return table
    compared = {row[0] for row in table["rows"]}
    rows = [row for row in earlier["rows"] if row[0] not in compared] + table["rows"]
    return table | {"rows": sorted(rows, key=lambda row: (row[0], int(row[1])))}


def ship_verdicts(table: dict, limit: float) -> dict[str, bool]:
    """Per module of a comparison: whether its NEW build may replace the OLD one, that is at
    every batch it takes at most `limit` times the old one's time or runs the same code (a
    ratio of the measurement's noise alone)."""
    col = {h: i for i, h in enumerate(table["header"])}
    verdicts: dict[str, bool] = {}
    for row in table["rows"]:
        fine = float(row[col["runtime / previous"]]) <= limit or row[col["same code"]] == "yes"
        verdicts[row[0]] = verdicts.get(row[0], True) and fine
    return verdicts


if __name__ == "__main__":
    sys.exit(main())
