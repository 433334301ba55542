"""Render BENCHMARKS.md, and README.md's results table, from the results in benchmarks/results/.

    python benchmarks/render.py            # rewrite BENCHMARKS.md and README.md's table
    python benchmarks/render.py --check    # exit 1 if either differs from what the data gives

benchmarks/results/<gpu>/ holds what the commands wrote, as they wrote it:

    <module>.json               mlpgen bench tuned/<module>.py --json        the public matrix
    train/<module>.json         the same with --train                        training steps
    tune/<module>.json          mlpgen --widths ... --json                   tune times
    tune/shared_<module>.json   benchmarks/record_shared_tune.sh             a shared study
    search/<table>.json         {"title", "command", "header", "rows"}       replay, ablation
    exhaustive/*.trials.json    exhaustive trial logs (read by tests, not rendered here)

A section is rendered only where its files exist, and only for the GPU folders of CLAIMED (the
card the speed claims are made on); other GPUs' folders are kept as data, not rendered. Every
table names the command that produced its numbers.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from mlpgen.report import bench_notes, fmt_speedup, fmt_us, grid

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
MAX_LINES = 300  # BENCHMARKS.md is read, not scrolled through
CLAIMED = ("h200",)  # the GPU folders BENCHMARKS.md and README.md state results of

HEADLINE = ("h200", "mlp_256x512x256_gelu_fp16")  # README's table: this GPU folder's module
README_BATCHES = (1, 64, 1024, 16384, 262144)
README_BEGIN = "<!-- results table: rendered by benchmarks/render.py, do not edit -->"
README_END = "<!-- end of results table -->"


@dataclass
class Gpu:
    """The results of one GPU folder."""

    folder: str
    bench: list[dict] = field(default_factory=list)
    train: list[dict] = field(default_factory=list)
    tune: list[dict] = field(default_factory=list)
    search: list[dict] = field(default_factory=list)
    compare: list[dict] = field(default_factory=list)


SHARED_TEXT = (
    "Two `mlpgen retune` processes on one GPU against one Optuna journal file: each measures "
    "the configs no other process has claimed and reads the others' results, so both report "
    "the study's measured count; the module is written once, with every bucket."
)


def load(results: Path = RESULTS) -> list[Gpu]:
    gpus = []
    for folder in sorted(p for p in results.iterdir() if p.is_dir() and p.name in CLAIMED):
        gpu = Gpu(folder.name)
        for kind, where in (
            ("bench", folder),
            ("train", folder / "train"),
            ("tune", folder / "tune"),
            ("search", folder / "search"),
            ("compare", folder / "compare"),
        ):
            for path in sorted(where.glob("*.json")):
                data = json.loads(path.read_text())
                if kind in ("bench", "train") and bool(data.get("train")) != (kind == "train"):
                    what = "a training" if data.get("train") else "a forward"
                    raise ValueError(f"{path}: {what} bench, not in its folder ({kind})")
                data["_file"] = path.relative_to(results.parent.parent).as_posix()
                getattr(gpu, kind).append(data)
        gpu.bench.sort(key=lambda d: (d["name"] != HEADLINE[1], d["name"]))  # headline first
        gpus.append(gpu)
    return gpus


# ---------------------------------------------------------------- pieces


def spec_text(spec: dict) -> str:
    """The spec in words: "256 → 512 → 256, gelu, fp16", then an output activation or no bias."""
    parts = [" → ".join(map(str, spec["widths"])), spec["act"], spec["dtype"]]
    if spec.get("out_act", "none") != "none":
        parts.append(f"out: {spec['out_act']}")
    if not spec.get("bias", True):
        parts.append("no bias")
    return ", ".join(parts)


def command(data: dict) -> str:
    """The command that wrote the file: the recorded one (after the environment variables that
    forced the module's training backward or lane, where set), its output sent to the file."""
    env = data.get("env", {})
    prefix = "".join(f"{k}={v} " for k, v in env.items() if k.startswith("MLPGEN_"))
    return f"{prefix}{data['command']} > {data['_file']}"


def ok_value(r: dict | None, key: str) -> float | None:
    return r.get(key) if r is not None and r["status"] == "ok" else None


SHOWN_SPREAD = 0.05  # a time whose samples spread this much or more shows it: "584.9 ±22%"


def time_text(r: dict | None, key: str) -> str:
    """A cell's time; its spread (interquartile range over the median) where SHOWN_SPREAD or
    more, so that a ratio within the noise reads as such."""
    if r is None:
        return "-"
    if r["status"] != "ok":
        return r["status"].split(":")[0]  # WRONG / failed / skipped: the reason is in the notes
    spread = r.get(key.replace("_us", "_spread"))
    noisy = r.get(key) is not None and spread is not None and spread >= SHOWN_SPREAD
    return fmt_us(r.get(key)) + (f" ±{spread:.0%}" if noisy else "")


def ratio_text(a: float | None, b: float | None) -> str:
    return fmt_speedup(a / b if a and b else None)


# (time key, mlpgen's contender and header, the contenders it is compared with and their headers)
GROUPS = (
    (
        "host_us",
        ("mlpgen", "mlpgen"),
        (("eager", "eager"), ("compile", "compile"), ("max-autotune", "max-autotune")),
    ),
    ("host_us", ("mlpgen+graph", "graph: mlpgen"), (("eager+graph", "graph: eager"),)),
    ("gpu_us", ("mlpgen", "GPU: mlpgen"), (("eager", "GPU: eager"),)),
)


def module_table(data: dict, batches=None, kernels: bool = True) -> str:
    """One row per batch: per-call µs of eager (and torch.compile where it ran) and of mlpgen,
    then mlpgen's speedup over each (that time / mlpgen's); the same for CUDA-graph replays and
    for GPU time where measured; a training step's floor (the loss alone) and its share of
    eager's step; the kernel the module ran, or the step's backward."""
    cells = {(r["batch"], r["contender"]): r for r in data["results"]}
    batches = batches or sorted({r["batch"] for r in data["results"]})

    def measured(name: str, key: str) -> bool:
        return any(ok_value(cells.get((b, name)), key) is not None for b in batches)

    header, columns = ["batch"], []  # columns: functions of the batch
    for key, (mine, mine_h), others in GROUPS:
        others = [(c, h) for c, h in others if measured(c, key)]
        if not others or not measured(mine, key):
            continue
        for c, h in [*others, (mine, mine_h)]:
            header.append(f"{h} µs")
            columns.append(lambda b, c=c, k=key: time_text(cells.get((b, c)), k))
        for c, h in others:
            header.append(f"{h} / mlpgen")
            columns.append(
                lambda b, c=c, m=mine, k=key: ratio_text(
                    ok_value(cells.get((b, c)), k), ok_value(cells.get((b, m)), k)
                )
            )
    if data.get("train") and measured("loss", "host_us"):  # the part of a step no MLP changes
        header += ["loss alone µs", "loss alone / eager"]
        columns.append(lambda b: time_text(cells.get((b, "loss")), "host_us"))
        columns.append(
            lambda b: ratio_text(
                ok_value(cells.get((b, "loss")), "host_us"),
                ok_value(cells.get((b, "eager")), "host_us"),
            )
        )
    backward = data.get("env", {}).get("backward")
    if data.get("train") and isinstance(backward, dict):  # the step's backward, not a forward
        header.append("backward")
        columns.append(lambda b: backward.get(str(b), "-"))
    elif kernels and data.get("dispatch"):
        header.append("mlpgen ran")
        columns.append(lambda b: kernel_text(data["dispatch"].get(str(b))))
    rows = [[str(b)] + [col(b) for col in columns] for b in batches]
    return grid(header, rows, markdown=True)


def kernel_text(d: dict | None) -> str:
    if not d:
        return "-"
    text = f"`{d['call']}`"
    if d.get("graph"):
        text += f" (graph: `{d['graph']}`)"
    return text


def notes(data: dict) -> list[str]:
    """bench's notes but the per-batch kernels, which the table's last column shows."""
    return [f"- {n}" for n in bench_notes(data) if not n.startswith("mlpgen ran ")]


def module_section(data: dict, level: str = "###") -> list[str]:
    out = [f"{level} {spec_text(data['spec'])} (`{data['name']}`)", ""]
    out += [f"`{command(data)}`", "", module_table(data)]
    extra = notes(data)
    return out + ([""] + extra if extra else [])


TRAIN_TEXT = (
    "`mlpgen bench --train`: per call, a training step of the MLP alone (forward, loss, the "
    "gradients of the input and of every weight and bias), each contender's output and "
    "gradients checked against the step in fp32 before it is timed. `backward`: what the module's "
    "steps ran, its training kernels (with MLPGEN_TRAIN_KERNELS=1: the untuned default configs "
    "where the table has no searched backward), cuBLASLt's GEMMs with act and act' in their "
    "epilogues (cublaslt) or eager's own ops. `bash "
    "benchmarks/retune_train.sh` searches the modules' training steps and re-runs these benches."
)
LOSS_TEXT = (
    " `loss alone`: the loss and its backward on eager's output, timed with the steps: the part "
    "of a step that no MLP changes."
)


def matrix(gpu: Gpu) -> list[str]:
    """Every module × batch: eager's per-call time over mlpgen's."""
    batches = sorted({r["batch"] for d in gpu.bench for r in d["results"]})
    rows = []
    for d in gpu.bench:
        cells = {(r["batch"], r["contender"]): r for r in d["results"]}
        rows.append(
            [f"`{d['name']}`"]
            + [
                ratio_text(
                    ok_value(cells.get((b, "eager")), "host_us"),
                    ok_value(cells.get((b, "mlpgen")), "host_us"),
                )
                for b in batches
            ]
        )
    return [grid(["module \\ batch", *map(str, batches)], rows, markdown=True)]


def hardware(gpus: list[Gpu]) -> list[str]:
    keys = ("gpu", "gpu_key", "cuda", "torch", "triton", "python", "mlpgen")
    header = ["GPU", "GPU key", "CUDA", "torch", "triton", "Python", "mlpgen", "dates"]
    rows = {}
    for gpu in gpus:
        for d in gpu.bench + gpu.train:
            env = d.get("env", {})
            row = tuple(str(env.get(k) or "-").replace("|", "\\|") for k in keys)  # "|" ends a cell
            rows.setdefault(row, set()).add((env.get("date") or "-")[:10])
    table = [[*row, ", ".join(sorted(dates))] for row, dates in rows.items()]
    return [grid(header, table, markdown=True)]


def method(gpus: list[Gpu]) -> list[str]:
    """How bench timed, in the words each run recorded (one line per distinct wording)."""
    seen: dict[str, list[str]] = {}
    for gpu in gpus:
        for d in gpu.bench + gpu.train:
            for what, key in (
                ("per-call time", "host_time"),
                ("GPU time", "gpu_time"),
                ("gradients", "grad"),
                ("checked", "check"),
                ("torch.compile", "compile"),
            ):
                text = d.get("settings", {}).get(key)
                texts = text if isinstance(text, list) else [text]
                for t in texts:
                    if t and t not in seen.setdefault(what, []):
                        seen[what].append(t)
    return [f"- {what}: {t}" for what, texts in seen.items() for t in texts]


def tune_table(runs: list[dict]) -> list[str]:
    """Tune times from `mlpgen ... --json` summaries: a retune's, or a generating run's (its
    tune under "tuned"), such as benchmarks/record_search.sh's cold tunes (their wall time
    from an empty triton cache); the search's and the decision's shares of the tuner's time
    (phase_seconds) where the summary has them."""
    header = ["module", "buckets", "measured", "compiled", "compile wait s", "search s"]
    header += ["decide s", "total s", "wall s"]
    rows, commands, notes = [], [], set()
    for d in runs:
        t = d.get("tuned", d)
        phases = t.get("phase_seconds") or {}
        rows.append(
            [
                f"`{Path(d['module']).stem}`" + (" (cold)" if d.get("cold") else ""),
                str(len(t.get("buckets", {}))),
                str(t.get("measured", "-")),
                str(t.get("compiled", "-")),
                fmt_us(t.get("compile_wait_seconds")),
                fmt_us(phases.get("search", t.get("seconds"))),
                fmt_us(phases.get("decide")),
                fmt_us(t.get("total_seconds")),
                fmt_us(d.get("wall_seconds")),
            ]
        )
        command = d.get("command") or f"mlpgen retune {d['module']} --json"
        commands.append(f"- `{command} > {d['_file']}`")
        if d.get("native_lane"):
            notes.add(f"mlpgen.runtime's native lane: {d['native_lane']}.")
    out = [grid(header, rows, markdown=True), "", *commands]
    return out + (["", *sorted(notes)] if notes else [])


def shared_table(runs: list[dict]) -> list[str]:
    """Shared studies (benchmarks/record_shared_tune.sh): processes on one journal file."""
    header = ["spec", "processes", "measured (each)", "measured twice", "buckets", "wall s"]
    rows, commands = [], []
    for d in runs:
        buckets = sorted({b for cells in d["buckets_in_module"].values() for b in cells})
        rows.append(
            [
                d["command"].split()[-1],
                str(len(d["processes"])),
                " / ".join(str(p["measured"]) for p in d["processes"]),
                str(d["measured_twice"]),
                str(len(buckets)),
                fmt_us(d["wall_seconds"]),
            ]
        )
        commands.append(f"- `{d['command']}` (writes {d['_file']})")
    return [grid(header, rows, markdown=True), "", *commands]


def search_section(table: dict) -> list[str]:
    """A table another tool computed (e.g. the held-out replay, the sampler ablation).
    "batches_shown": only the rows of those batches (the JSON keeps every row)."""
    out = [f"#### {table['title']}", "", f"`{table['command']}`", ""]
    rows = table["rows"]
    if "batches_shown" in table:
        column = table["header"].index("batch")
        rows = [r for r in rows if int(r[column]) in table["batches_shown"]]
    out.append(grid(table["header"], [list(map(str, r)) for r in rows], markdown=True))
    return out + (["", table["note"]] if table.get("note") else [])


# ---------------------------------------------------------------- documents


def benchmarks_md(gpus: list[Gpu]) -> str:
    out = [
        "# Benchmarks",
        "",
        "Rendered by `python benchmarks/render.py` from the JSON in `benchmarks/results/`, which",
        "the command above each table wrote; `bash benchmarks/run_public_matrix.sh` re-runs the",
        "public matrix on the GPU at hand and renders this file again.",
        "",
        "## Hardware and versions",
        "",
        *hardware(gpus),
        "",
        "## How it is measured",
        "",
        "`mlpgen bench` runs every contender on the same weights and the same random input per",
        "batch and checks its output against eager's before timing it. Speedups are the other",
        "contender's time over mlpgen's (above 1: mlpgen is faster); ±: a time's spread "
        f"(interquartile range over the median) where {SHOWN_SPREAD:.0%} or more. In bench's "
        "words:",
        "",
        *method(gpus),
    ]
    for gpu in gpus:
        name = gpu.bench[0]["env"].get("gpu") if gpu.bench else gpu.folder
        if gpu.bench:
            out += [
                "",
                f"## Public matrix: {name}",
                "",
                "Eager `nn.Sequential`'s per-call time over mlpgen's, per module and batch:",
                "",
            ]
            out += matrix(gpu)
            for d in gpu.bench:
                out += [""] + module_section(d)
        # training benches (forward + backward), rendered once their results exist
        if gpu.train:
            floor = any(r["contender"] == "loss" for d in gpu.train for r in d["results"])
            out += ["", f"## Training step: {name}", "", TRAIN_TEXT + LOSS_TEXT * floor]
            for d in gpu.train:
                out += [""] + module_section(d)
        # cold tune times, rendered once their results exist
        tunes = [d for d in gpu.tune if "processes" not in d]
        shared = [d for d in gpu.tune if "processes" in d]
        if tunes:
            out += ["", f"## Tune times: {name}", "", *tune_table(tunes)]
        if shared:
            out += ["", f"## Shared studies: {name}", "", SHARED_TEXT, "", *shared_table(shared)]
        if gpu.compare:
            out += ["", f"## Module layouts compared: {name}"]
            for table in gpu.compare:
                out += [""] + search_section(table)
        # search quality (held-out replay, sampler ablation), once their tables exist
        if gpu.search:
            out += ["", f"## Search quality: {name}"]
            for table in gpu.search:
                out += [""] + search_section(table)
    return "\n".join(out) + "\n"


def readme_table(gpus: list[Gpu]) -> str | None:
    """The headline's per-call times at a few batches, with the command, for README.md."""
    folder, name = HEADLINE
    for gpu in gpus:
        for d in gpu.bench:
            if gpu.folder == folder and d["name"] == name:
                cells = {(r["batch"], r["contender"]) for r in d["results"]}
                data = {
                    **d,
                    "results": [r for r in d["results"] if r["contender"] in ("eager", "mlpgen")],
                }
                batches = [b for b in README_BATCHES if (b, "mlpgen") in cells]
                env = d["env"]
                return "\n".join(
                    [
                        README_BEGIN,
                        f"{spec_text(d['spec'])} on an {env['gpu']} (torch {env['torch']}, "
                        f"triton {env['triton']}),",
                        "against eager `nn.Sequential` with the same weights: µs per call (a loop "
                        "of calls, one synchronize)",
                        "and of GPU time (one call after an L2 flush); ±: the spread of a time's "
                        "samples. All of it: [BENCHMARKS.md](BENCHMARKS.md).",
                        "",
                        module_table(data, batches, kernels=False),
                        "",
                        f"`{command(d)}`",
                        README_END,
                    ]
                )
    return None


def with_readme_table(readme: str, table: str | None) -> str:
    if table is None or README_BEGIN not in readme:
        return readme
    head, rest = readme.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    return head + table + tail


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="exit 1 if a file is out of date")
    p.add_argument("--results", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    gpus = load(args.results)
    bench = benchmarks_md(gpus)
    lines = bench.count("\n")
    if lines > MAX_LINES:
        print(f"BENCHMARKS.md would have {lines} lines (at most {MAX_LINES})", file=sys.stderr)
        return 1
    readme_path = ROOT / "README.md"
    outputs = {
        ROOT / "BENCHMARKS.md": bench,
        readme_path: with_readme_table(readme_path.read_text(), readme_table(gpus)),
    }
    stale = [path for path, text in outputs.items() if path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path.name} is out of date: run python benchmarks/render.py", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(outputs[path])
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
