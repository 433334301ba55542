"""`mlpgen profile`: eager nn.Sequential and the generated module, with the same weights, under
torch.profiler; where their time goes, side by side.

One profiler session records both runs, each inside a `record_function` range named after it
("eager", "mlpgen") that ends with a synchronize, so every kernel of a run lies between the
start of its range and the start of the next one. Each forward has its own range
("eager.forward", ...). The statistics are computed from the exported Chrome trace by the pure
functions below, which take a list of trace events (dicts with ph, cat, name, ts, dur in µs)
and are tested on synthetic traces.

Without CUDA both runs are profiled on the CPU (the generated module then runs its torch path):
the GPU columns are empty and the top list shows torch ops instead of kernels.
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

LABELS = ("eager", "mlpgen")
KERNEL_CATS = frozenset({"kernel"})
GPU_CATS = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
RANGE_CAT = "user_annotation"
TOP = 5

# ---------------------------------------------------------------- pure: events -> statistics


def complete(events: Iterable[dict]) -> list[dict]:
    """The events with a duration ("X" phase): ops, ranges, kernels."""
    return [e for e in events if e.get("ph") == "X" and "ts" in e]


def category(e: dict) -> str:
    return str(e.get("cat", "")).lower()


def end(e: dict) -> float:
    return e["ts"] + e.get("dur", 0.0)


def named_ranges(events: Iterable[dict], name: str) -> list[dict]:
    """The CPU-side record_function ranges with this name, in time order."""
    found = [e for e in complete(events) if category(e) == RANGE_CAT and e.get("name") == name]
    return sorted(found, key=lambda e: e["ts"])


def run_windows(events: Sequence[dict], labels: Sequence[str] = LABELS) -> dict[str, tuple]:
    """label -> (cpu_start, cpu_end, window_end): the run's outer range, and the time up to
    which its GPU work is counted (the next run's start; GPU work of a run may be reported a
    little after its CPU range ends, never after the next run has started)."""
    starts = {}
    for label in labels:
        found = named_ranges(events, label)
        if found:
            starts[label] = found[0]
    order = sorted(starts, key=lambda k: starts[k]["ts"])
    windows = {}
    for i, label in enumerate(order):
        r = starts[label]
        nxt = starts[order[i + 1]]["ts"] if i + 1 < len(order) else float("inf")
        windows[label] = (r["ts"], end(r), nxt)
    return windows


def merge_intervals(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """Union of [start, end) intervals, sorted, overlapping and touching ones joined."""
    merged: list[list[float]] = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return [(s, e) for s, e in merged]


def idle_gaps(gpu_events: Iterable[dict]) -> list[float]:
    """Gaps (µs) during which no GPU work ran, between the first GPU event and the last."""
    busy = merge_intervals((e["ts"], end(e)) for e in gpu_events)
    return [b[0] - a[1] for a, b in zip(busy, busy[1:])]


def busy_us(gpu_events: Iterable[dict]) -> float:
    """Time (µs) with at least one GPU event running (concurrent kernels counted once)."""
    return sum(e - s for s, e in merge_intervals((e["ts"], end(e)) for e in gpu_events))


def kernels(events: Iterable[dict]) -> list[dict]:
    return [e for e in complete(events) if category(e) in KERNEL_CATS]


def top_level_ops(events: Iterable[dict]) -> list[dict]:
    """CPU ops (cat cpu_op) not nested inside another CPU op of the same thread: what the code
    called, not what those calls called in turn."""
    by_thread = defaultdict(list)
    for e in complete(events):
        if category(e) == "cpu_op":
            by_thread[(e.get("pid"), e.get("tid"))].append(e)
    tops = []
    for ops in by_thread.values():
        ops.sort(key=lambda e: (e["ts"], -e.get("dur", 0.0)))
        outer_end = -float("inf")
        for e in ops:
            if e["ts"] >= outer_end:  # otherwise it runs inside the last top-level op
                tops.append(e)
                outer_end = end(e)
    return sorted(tops, key=lambda e: e["ts"])


def top_by_time(events: Iterable[dict], forwards: int, n: int = TOP) -> list[dict]:
    """Events grouped by name, longest total first: calls and µs per forward."""
    total: dict[str, float] = defaultdict(float)
    calls: dict[str, int] = defaultdict(int)
    for e in events:
        total[e["name"]] += e.get("dur", 0.0)
        calls[e["name"]] += 1
    names = sorted(total, key=lambda k: (-total[k], k))[:n]
    return [
        {
            "name": k,
            "calls_per_forward": calls[k] / forwards,
            "us_per_forward": total[k] / forwards,
        }
        for k in names
    ]


def run_stats(events: Sequence[dict], label: str, window: tuple, forwards: int) -> dict:
    """Statistics of one run: its events are those inside its window."""
    cpu_start, cpu_end, window_end = window
    cpu = [
        e
        for e in complete(events)
        if not category(e).startswith("gpu_")
        and category(e) not in GPU_CATS
        and cpu_start <= e["ts"] <= cpu_end
    ]
    gpu = [
        e for e in complete(events) if category(e) in GPU_CATS and cpu_start <= e["ts"] < window_end
    ]
    fwd = [e for e in cpu if category(e) == RANGE_CAT and e.get("name") == f"{label}.forward"]
    ops = top_level_ops(cpu)
    stats = {
        "forwards": forwards,
        "cpu_us_per_call": statistics.median(e["dur"] for e in fwd) if fwd else None,
        "wall_us_per_forward": (cpu_end - cpu_start) / forwards,
        "ops_per_forward": len(ops) / forwards,
        "kernels_per_forward": None,
        "gpu_us_per_forward": None,
        "gpu_idle_us_per_forward": None,
        "top": top_by_time(ops, forwards),
        "top_kind": "torch ops",
    }
    if gpu:
        ks = kernels(gpu)
        stats.update(
            kernels_per_forward=len(ks) / forwards,
            gpu_us_per_forward=busy_us(gpu) / forwards,
            gpu_idle_us_per_forward=sum(idle_gaps(gpu)) / forwards,
            top=top_by_time(ks, forwards),
            top_kind="kernels",
        )
    return stats


def analyse(events: Sequence[dict], forwards: int, labels: Sequence[str] = LABELS) -> dict:
    """label -> run statistics, for each labelled run found in the trace."""
    windows = run_windows(events, labels)
    return {label: run_stats(events, label, windows[label], forwards) for label in windows}


# ---------------------------------------------------------------- recording


def record(
    path: Path, batch: int, forwards: int = 20, seed: int = 0, train: bool = False
) -> tuple[dict, dict]:
    """Profile both runs; returns (the Chrome trace as a dict, facts about the run). train:
    each call a training step as `mlpgen bench --train` times it (forward, loss, gradients of
    the input and of every parameter), not a forward."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    from mlpgen.bench import build_fused, build_sequential, environment
    from mlpgen.emit import read_module
    from mlpgen.selfcheck import load_module
    from mlpgen.verify import TORCH_DTYPE, random_problem

    spec, _, _ = read_module(path)
    mod = load_module(path)
    cuda = torch.cuda.is_available()
    dev = torch.device("cuda" if cuda else "cpu")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    _, weights, biases = random_problem(spec, 1, device=dev, seed=seed)
    gen = torch.Generator(device="cpu").manual_seed(seed + 1)
    x = torch.randn(batch, spec.widths[0], generator=gen).to(dev, TORCH_DTYPE[spec.dtype])
    if train:
        from mlpgen.bench import BY_NAME
        from mlpgen.train_bench import TrainModels

        steps = TrainModels(spec, mod, weights, biases)
        calls = {label: steps.prepare(BY_NAME[label], x, sync).call for label in LABELS}
    else:
        models = {
            "eager": build_sequential(spec, weights, biases),
            "mlpgen": build_fused(mod, weights, biases),
        }
        calls = {label: functools.partial(model, x) for label, model in models.items()}
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with torch.enable_grad() if train else torch.no_grad():
        for call in calls.values():  # compile, allocate, tune cuBLAS: not what we profile
            for _ in range(3):
                call()
        sync()
        with profile(activities=activities) as prof:
            with record_function("warm-up"):  # the profiler's own first-use cost lands here
                for call in calls.values():
                    call()
                sync()
            for label, call in calls.items():
                with record_function(label):
                    for _ in range(forwards):
                        with record_function(f"{label}.forward"):
                            call()
                    sync()
    fd, tmp = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(tmp)
        trace = json.loads(Path(tmp).read_text())
    finally:
        os.unlink(tmp)
    facts = {
        "module": str(path),
        "name": spec.name,
        "spec": spec.to_dict(),
        "batch": batch,
        "forwards": forwards,
        "train": train,
        "device": dev.type,
        "env": environment(mod, dev),
    }
    return trace, facts


def profile_module(
    path: Path,
    batch: int,
    forwards: int = 20,
    trace_path: Path | None = None,
    command: str | None = None,
    train: bool = False,
) -> dict:
    """Record (train: training steps), analyse and (optionally) write the labelled Chrome
    trace."""
    for name, value in (("batch", batch), ("forwards", forwards)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    trace, facts = record(path, batch, forwards, train=train)
    events = trace.get("traceEvents", [])
    result = dict(facts, command=command, runs=analyse(events, forwards))
    missing = [label for label in LABELS if label not in result["runs"]]
    if missing:
        raise RuntimeError(f"the profiler trace has no range for {', '.join(missing)}")
    if trace_path is not None:
        trace["mlpgen"] = {k: v for k, v in result.items() if k != "runs"}
        from mlpgen.emit import atomic_write

        atomic_write(Path(trace_path), json.dumps(trace))  # never half a trace after a Ctrl-C
        result["trace"] = str(trace_path)
    return result
