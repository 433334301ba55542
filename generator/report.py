"""Tables, markdown reports and the latency plot for `mlpgen bench` and `mlpgen profile`.

Everything here works from recorded results (the dicts `bench.run_bench` and
`profile.profile_module` return, or their JSON), so it runs without a GPU. matplotlib is an
optional extra (`pip install 'mlpgen[plot]'`), imported only to draw.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from mlpgen.module_file import short

PLOT_HINT = "--plot needs matplotlib: pip install 'mlpgen[plot]'"


class PlotUnavailable(RuntimeError):
    """No plot can be written: matplotlib is not installed, or it writes no such format."""


def require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise PlotUnavailable(PLOT_HINT) from None


def require_plot_file(path: Path) -> None:
    """PlotUnavailable unless matplotlib is installed and writes path's format (its suffix)."""
    require_matplotlib()
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    if path.suffix[1:].lower() not in formats:
        raise PlotUnavailable(
            f"--plot {short(path)}: name the format by its suffix, one of "
            + ", ".join(f".{f}" for f in sorted(formats))
        )


# ---------------------------------------------------------------- formatting


def fmt_us(v: float | None) -> str:
    if v is None:
        return "-"
    if v < 10:
        return f"{v:.2f}"
    if v < 1000:
        return f"{v:.1f}"
    return f"{v:.0f}"


def fmt_count(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.0f}" if abs(v - round(v)) < 1e-9 else f"{v:.2f}"


def fmt_speedup(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}×"


def grid(header: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool = False) -> str:
    """A table: markdown pipes, or plain text with numbers right-aligned."""
    if markdown:
        lines = ["| " + " | ".join(header) + " |"]
        lines.append("|" + "|".join([":---"] + ["---:"] * (len(header) - 1)) + "|")
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    numeric = all(str(r[0]).isdigit() for r in rows)  # batch sizes read best right-aligned

    def line(r):
        cells = [str(r[0]).rjust(widths[0]) if numeric else str(r[0]).ljust(widths[0])]
        cells += [str(c).rjust(w) for c, w in zip(r[1:], widths[1:])]
        return "  ".join(cells).rstrip()

    return "\n".join(line(r) for r in [header, *rows])


def env_line(data: dict) -> str:
    env = data.get("env", {})
    parts = [env.get("gpu") or "CPU"]
    for k in ("torch", "triton"):
        if env.get(k):
            parts.append(f"{k} {env[k]}")
    if env.get("cuda"):
        parts.append(f"CUDA {env['cuda']}")
    if env.get("date"):
        parts.append(env["date"])
    return " · ".join(parts)


# ---------------------------------------------------------------- bench


def contender_names(data: dict) -> list[str]:
    return [c["name"] for c in data["contenders"]]


def cell_text(r: dict | None, time_key: str, speedup_key: str) -> str:
    if r is None:
        return "-"
    status = r["status"]
    if status == "ok":
        if r.get(time_key) is None:
            return "-"
        return f"{fmt_us(r[time_key])} ({fmt_speedup(r.get(speedup_key))})"
    if status == "WRONG":
        return "WRONG"
    return status.split(":")[0]  # failed / skipped: the reason goes in the notes


def bench_sections(data: dict) -> list[tuple[str, list[str], list[list[str]]]]:
    names = contender_names(data)
    cells = {(r["batch"], r["contender"]): r for r in data["results"]}
    batches = sorted({r["batch"] for r in data["results"]})
    sections = []
    for title, tk, sk in (
        (
            "per-call time, µs (loops of calls, one sync each) and speedup vs eager",
            "host_us",
            "host_speedup",
        ),
        (
            "GPU time, µs (bursts of calls after an L2 flush; graphs: replays), speedup vs eager",
            "gpu_us",
            "gpu_speedup",
        ),
    ):
        if all(r.get(tk) is None for r in data["results"]):
            continue  # e.g. GPU times of a run without a GPU
        rows = [[str(b)] + [cell_text(cells.get((b, n)), tk, sk) for n in names] for b in batches]
        sections.append((title, ["batch", *names], rows))
    return sections


DO_BENCH = "triton.testing.do_bench"  # how recorded runs' settings name the earlier GPU time


def bench_notes(data: dict) -> list[str]:
    notes = []
    for r in data["results"]:
        if r["status"] == "WRONG":
            why = r.get("reason") or (  # runs recorded before the element-wise check
                f"rel err {r.get('rel_err', math.nan):.2e} vs eager, tolerance {_tolerance(data):g}"
            )
            what = "WRONG, not timed" if data.get("train") else "WRONG output"
            notes.append(f"{r['contender']} at batch {r['batch']}: {what} ({why})")
    failed: dict[tuple[str, str], list[int]] = {}  # the same reason at many batches: one note
    for r in data["results"]:
        if r["status"] not in ("ok", "WRONG"):
            failed.setdefault((r["contender"], r["status"]), []).append(r["batch"])
    for (name, status), batches in failed.items():
        notes.append(f"{name} at batch {', '.join(map(str, sorted(batches)))}: {status}")
    for c in data["contenders"]:
        if not c.get("compile_mode"):
            continue
        times = [
            (r["batch"], r["compile_s"])
            for r in data["results"]
            if r["contender"] == c["name"] and r.get("compile_s") is not None
        ]
        if times:
            worst = max(times, key=lambda t: t[1])
            total = sum(t for _, t in times)
            notes.append(
                f"{c['name']}: one torch.compile, dynamic=False, so each batch size is compiled "
                f"on its first call; compile time (not in the timings) {total:.1f} s in all, "
                f"longest {worst[1]:.1f} s at batch {worst[0]}"
            )
    runs: dict[tuple, list[str]] = {}  # one note per thing the module ran
    for batch, d in data.get("dispatch", {}).items():
        runs.setdefault((d["call"], d.get("graph"), d.get("lane")), []).append(batch)
    for (call, graph, lane), batches in runs.items():
        parts = [f"in a CUDA graph: {graph}"] if graph else []
        if lane:
            parts.append(f"calls through the {lane} lane")
        where = f" ({', '.join(parts)})" if parts else ""
        notes.append(f"mlpgen ran {call}{where} at batch {', '.join(batches)}")
    env = data.get("env", {})
    if env.get("tuned_for_this_gpu") is False:
        notes.append(
            "the module has no tuned configs for this GPU: it ran its heuristic default "
            f"(run `mlpgen retune {data.get('module', 'PATH')}`)"
        )
    if data.get("merged_commands"):
        notes.append(f"merged from {len(data['merged_commands'])} runs")
    method = data.get("settings", {}).get("gpu_time")
    methods = method if isinstance(method, list) else [method]  # a list: merged runs differ
    if any(m and m.startswith(DO_BENCH) for m in methods):
        some = " in some of the merged runs" if len(methods) > 1 else ""
        notes.append(
            f"GPU time{some} by triton.testing.do_bench alone (recorded before bench kept the GPU "
            "busy over each call's launch): where a call's launches outlast do_bench's L2 "
            "flush, that time includes the host's"
        )
    return notes


def _tolerance(data: dict) -> float:
    from mlpgen.verify import TOLERANCE

    return TOLERANCE[data["spec"]["dtype"]]


def what_ran(data: dict) -> str:
    """The module's name, and what was timed where it was not a forward."""
    if data.get("train"):
        loss = data.get("settings", {}).get("loss", "a loss")
        return f"{data['name']}, training step (forward, {loss}, backward)"
    return data["name"]


def bench_text(data: dict) -> str:
    """The compact table printed by `mlpgen bench`."""
    out = [f"{what_ran(data)} on {env_line(data)}"]
    for title, header, rows in bench_sections(data):
        out += ["", title, grid(header, rows)]
    notes = bench_notes(data)
    if notes:
        out += [""] + [f"note: {n}" for n in notes]
    return "\n".join(out)


def bench_markdown(data: dict, plot: str | None = None, level: int = 2) -> str:
    h = "#" * level
    step = " (training step)" if data.get("train") else ""
    out = [f"{h} `{data['name']}`{step}: mlpgen vs eager, CUDA graphs and torch.compile", ""]
    out.append(f"{env_line(data)}")
    commands = data.get("merged_commands") or [data.get("command")]
    commands = [c for c in commands if c]
    if commands:
        out += ["", "```", *commands, "```"]
    for title, header, rows in bench_sections(data):
        out += ["", f"**{title}**", "", grid(header, rows, markdown=True)]
    notes = bench_notes(data)
    if notes:
        out += [""] + [f"- {n}" for n in notes]
    if plot:
        out += ["", f"![latency vs batch]({plot})"]
    return "\n".join(out) + "\n"


def minor_label(v: float, _pos=None) -> str:
    """Label 2× and 5× a power of ten between the decades; leave the other minor ticks bare."""
    if v <= 0:
        return ""
    return f"{v:g}" if round(v / 10 ** math.floor(math.log10(v) + 1e-9)) in (2, 5) else ""


def plot_bench(data: dict, path: Path) -> Path:
    """Latency vs batch, log-log, one line per contender: per-call time and GPU time (a graph
    contender dashed, in the colour of what it captures)."""
    require_matplotlib()
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, NullLocator

    panels = [
        (key, title)
        for key, title in (
            ("host_us", "per-call time (loop of calls, one sync)"),
            ("gpu_us", "GPU time (bursts of calls after an L2 flush; graphs: replays)"),
        )
        if any(r.get(key) is not None for r in data["results"])
    ]
    fig = Figure(figsize=(6 * max(len(panels), 1), 5), layout="constrained")
    axes = fig.subplots(1, max(len(panels), 1), squeeze=False)[0]
    colours = {}
    batches = sorted({r["batch"] for r in data["results"]})
    for ax, (key, title) in zip(axes, panels):
        for name in contender_names(data):
            runs = {r["batch"]: r for r in data["results"] if r["contender"] == name}
            ok = {b: r[key] for b, r in runs.items() if r["status"] == "ok" and r.get(key)}
            if not ok:
                continue
            points = [(b, ok.get(b, math.nan)) for b in batches]  # a gap where it did not run
            wrong = [str(b) for b, r in sorted(runs.items()) if r["status"] == "WRONG"]
            base = name.removesuffix("+graph")
            colour = colours.setdefault(base, f"C{len(colours)}")
            ax.plot(
                *zip(*points),
                "--" if name != base else "-",
                color=colour,
                marker="o",
                markersize=4,
                linewidth=2.5 if base == "mlpgen" else 1.5,
                label=name + (f" (WRONG at {', '.join(wrong)})" if wrong else ""),
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(batches, [str(b) for b in batches], rotation=45 if len(batches) > 5 else 0)
        ax.xaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(minor_label))
        ax.set_xlabel("batch (rows)")
        ax.set_ylabel("µs per call")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(f"{what_ran(data)}\n{env_line(data)}", fontsize="medium")
    fig.savefig(path, dpi=110)
    return Path(path)


# ---------------------------------------------------------------- profile

PROFILE_ROWS = (
    ("kernels per forward", "kernels_per_forward", fmt_count),
    ("GPU time per forward, µs", "gpu_us_per_forward", fmt_us),
    ("GPU idle between kernels per forward, µs", "gpu_idle_us_per_forward", fmt_us),
    ("CPU time per call, µs", "cpu_us_per_call", fmt_us),
    ("wall time per forward, µs", "wall_us_per_forward", fmt_us),
    ("torch ops per forward", "ops_per_forward", fmt_count),
)
PROFILE_CAVEAT = (
    "Times are taken under torch.profiler, which adds its own overhead to every op; "
    "`mlpgen bench` measures without it."
)


def profile_unit(result: dict) -> str:
    """What one call of a profiled run is: a forward, or a training step (profile --train)."""
    return "training step" if result.get("train") else "forward"


def profile_title(result: dict) -> str:
    return (
        f"{result['name']} at batch {result['batch']}, {result['forwards']} "
        f"{profile_unit(result)}s each on {env_line(result)}"
    )


def profile_sections(result: dict) -> tuple[list, list, list]:
    """(header, rows) of the side-by-side table, and one top list per run."""
    labels = list(result["runs"])
    header = ["", *labels]
    unit = profile_unit(result)
    rows = [
        [title.replace("forward", unit), *(fmt(result["runs"][label][key]) for label in labels)]
        for title, key, fmt in PROFILE_ROWS
        if any(result["runs"][label][key] is not None for label in labels)  # no GPU: no GPU rows
    ]
    tops = []
    for label in labels:
        run = result["runs"][label]
        top_rows = [
            [t["name"], fmt_count(t["calls_per_forward"]), fmt_us(t["us_per_forward"])]
            for t in run["top"]
        ]
        tops.append((f"{label}: top {run['top_kind']}", ["name", f"per {unit}", "µs"], top_rows))
    return header, rows, tops


def shorten(name: str, n: int = 70) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"


def profile_text(result: dict) -> str:
    header, rows, tops = profile_sections(result)
    out = [profile_title(result), "", grid(header, rows)]
    for title, h, r in tops:
        r = [[shorten(row[0]), *row[1:]] for row in r]
        out += ["", title, grid(h, r) if r else "  (none)"]
    if result["device"] != "cuda":
        out += ["", "no CUDA GPU: both runs profiled on the CPU (the module's torch path)"]
    out += ["", PROFILE_CAVEAT]
    if result.get("trace"):
        out.append(f"Chrome trace: {result['trace']} (open in chrome://tracing or ui.perfetto.dev)")
    return "\n".join(out)


def profile_markdown(result: dict, bench: dict | None = None, plot: str | None = None) -> str:
    """The report of `mlpgen profile --report`: the tables, then the bench results if given."""
    header, rows, tops = profile_sections(result)
    out = [f"# Where the time goes: `{result['name']}` at batch {result['batch']}", ""]
    out.append(profile_title(result))
    if result.get("command"):
        out += ["", "```", result["command"], "```"]
    out += ["", grid(header, rows, markdown=True)]
    for title, h, r in tops:
        r = [[f"`{shorten(row[0], 90)}`", *row[1:]] for row in r]
        out += ["", f"**{title}**", "", grid(h, r, markdown=True) if r else "(none)"]
    out += [""]
    if result["device"] != "cuda":
        out += ["No CUDA GPU: both runs were profiled on the CPU (the module's torch path).", ""]
    out.append(PROFILE_CAVEAT)
    if result.get("trace"):
        out += ["", f"Chrome trace with both runs labelled: `{result['trace']}`."]
    if bench is not None:
        out += ["", bench_markdown(bench, plot=plot, level=2).rstrip()]
    return "\n".join(out) + "\n"
