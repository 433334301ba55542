"""`mlpgen bench`: the generated module side by side with eager PyTorch, CUDA graphs and
torch.compile, per batch size, on the GPU at hand.

Every contender runs the same weights on the same fresh random input per batch. Its output is
checked against eager's (relative norm error within the dtype's tolerance, else WRONG) before it
is timed. Two times per cell:
- per-call time: a loop of calls then one synchronize, divided by the calls; the median of
  several loops. What a caller sees: host overhead and GPU work, whichever is longer.
- GPU time: the median of one call between CUDA events, the L2 flushed before each (as
  `triton.testing.do_bench` does) and the GPU kept busy over the call's launch, so the host's
  time never shows; for graph contenders the replay of the captured graph.
A contender that fails (compile error, out of memory, ...) is recorded as "failed: reason" and
the run goes on. The result is a plain dict (JSON) that `mlpgen.report` turns into tables and a
plot; the pure parts (speedups, verdicts, merging runs) are at the top of this file.
"""

from __future__ import annotations

import copy
import datetime
import functools
import math
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import torch

import mlpgen
from mlpgen.activations import ACTIVATIONS
from mlpgen.emit import kernel_text, read_module
from mlpgen.space import DEFAULT_BUCKETS
from mlpgen.spec import MLPSpec
from mlpgen.verify import TOLERANCE, TORCH_DTYPE, random_problem, reference, rel_error

BASELINE = "eager"


@dataclass(frozen=True)
class Contender:
    name: str
    label: str
    graph: bool = False  # captured once per batch in a CUDA graph, timed by replay
    compile_mode: str | None = None  # torch.compile mode ("default", "max-autotune")


CONTENDERS = (
    Contender("eager", "eager nn.Sequential"),
    Contender("eager+graph", "eager nn.Sequential in a CUDA graph", graph=True),
    Contender("compile", "torch.compile (default)", compile_mode="default"),
    Contender("max-autotune", 'torch.compile(mode="max-autotune")', compile_mode="max-autotune"),
    Contender("mlpgen", "generated module (FusedMLP)"),
    Contender("mlpgen+graph", "generated module in a CUDA graph", graph=True),
)
BY_NAME = {c.name: c for c in CONTENDERS}


@dataclass
class Cell:
    """One contender at one batch size. Times in microseconds; speedups are eager / this."""

    batch: int
    contender: str
    status: str  # "ok", "WRONG", "failed: ...", "skipped: ..."
    host_us: float | None = None
    gpu_us: float | None = None
    rel_err: float | None = None
    compile_s: float | None = None
    host_speedup: float | None = None
    gpu_speedup: float | None = None


# ---------------------------------------------------------------- pure parts


def speedup(baseline_us: float | None, us: float | None) -> float | None:
    """How many times faster than the baseline (eager time / this time); None if unknown."""
    if baseline_us is None or us is None or us <= 0 or baseline_us <= 0:
        return None
    if not (math.isfinite(baseline_us) and math.isfinite(us)):
        return None
    return baseline_us / us


def add_speedups(cells: Sequence[Cell], baseline: str = BASELINE) -> None:
    """Fill host_speedup/gpu_speedup of every cell against the baseline at the same batch.
    Only a baseline that ran ("ok") counts; a cell that is not ok gets none."""
    base = {c.batch: c for c in cells if c.contender == baseline and c.status == "ok"}
    for c in cells:
        b = base.get(c.batch)
        ok = c.status == "ok" and b is not None
        c.host_speedup = speedup(b.host_us, c.host_us) if ok else None
        c.gpu_speedup = speedup(b.gpu_us, c.gpu_us) if ok else None


def verdict(out: torch.Tensor, expected: torch.Tensor, dtype: str) -> tuple[str, float]:
    """("ok" | "WRONG", relative norm error of `out` against `expected`)."""
    if tuple(out.shape) != tuple(expected.shape):
        return "WRONG", math.inf
    err = rel_error(out, expected.float())
    return ("ok" if err <= TOLERANCE[dtype] else "WRONG"), err


def failure(e: BaseException) -> str:
    """A one-line reason for a failed contender."""
    lines = str(e).strip().splitlines()
    first = lines[0] if lines else ""
    text = f"{type(e).__name__}: {first}" if first else type(e).__name__
    return "failed: " + (text if len(text) <= 160 else text[:157] + "...")


def merge_runs(runs: Sequence[dict]) -> dict:
    """One result from several recorded runs of the same module on the same GPU: the first run's
    cells, plus any (batch, contender) that a later run measured and the first did not (or only
    skipped). Each cell keeps the speedups measured against the eager of its own run."""
    if not runs:
        raise ValueError("no runs to merge")
    first = runs[0]
    for other in runs[1:]:
        for key, what in (("name", "module"), ("env.gpu", "GPU")):
            a, b = lookup(first, key), lookup(other, key)
            if a != b:
                raise ValueError(f"cannot merge runs of a different {what}: {a!r} vs {b!r}")
    merged = copy.deepcopy(first)
    cells = {(r["batch"], r["contender"]): r for r in merged["results"]}
    for other in runs[1:]:
        for r in other["results"]:
            key = (r["batch"], r["contender"])
            if key not in cells or cells[key]["status"].startswith("skipped"):
                cells[key] = copy.deepcopy(r)
        merged.setdefault("merged_commands", [first.get("command")]).append(other.get("command"))
    methods = list(dict.fromkeys(lookup(r, "settings.gpu_time") for r in runs))
    if len(methods) > 1:  # runs recorded before and after gpu_time_us changed
        merged.setdefault("settings", {})["gpu_time"] = methods
    order = {c.name: i for i, c in enumerate(CONTENDERS)}
    merged["results"] = sorted(
        cells.values(), key=lambda r: (r["batch"], order.get(r["contender"], 99))
    )
    names = {r["contender"] for r in merged["results"]}
    merged["contenders"] = [asdict(c) for c in CONTENDERS if c.name in names]
    return merged


def lookup(d: dict, dotted: str):
    for part in dotted.split("."):
        d = d.get(part, {}) if isinstance(d, dict) else {}
    return d or None


def pick_contenders(only: Sequence[str] | None, no_compile: bool) -> tuple[Contender, ...]:
    """The contenders to run, in table order; the eager baseline always runs."""
    if only:
        unknown = [n for n in only if n not in BY_NAME]
        if unknown:
            raise ValueError(f"unknown contender {unknown[0]!r}; choose from {', '.join(BY_NAME)}")
    chosen = [
        c
        for c in CONTENDERS
        if (not only or c.name in only or c.name == BASELINE)
        and not (no_compile and c.compile_mode)
    ]
    return tuple(chosen)


def default_batches(tuned: dict, gpu_key: str | None) -> tuple[int, ...]:
    """The module's tuned buckets for this GPU, else its default table's, else DEFAULT_BUCKETS."""
    table = tuned.get(gpu_key) if gpu_key else None
    table = table or tuned.get("default")
    return tuple(sorted(table)) if table else DEFAULT_BUCKETS


# ---------------------------------------------------------------- the models


def build_sequential(spec: MLPSpec, weights, biases) -> torch.nn.Sequential:
    """nn.Sequential(Linear, act, ..., Linear[, out_act]) holding copies of the given weights,
    as a user would write it (activation modules from the one activation table)."""
    layers: list[torch.nn.Module] = []
    for i, w in enumerate(weights):
        n, k = w.shape
        lin = torch.nn.Linear(k, n, bias=spec.bias, device=w.device, dtype=w.dtype)
        with torch.no_grad():
            lin.weight.copy_(w)
            if spec.bias:
                lin.bias.copy_(biases[i])
        layers.append(lin)
        act = spec.out_act if i == len(weights) - 1 else spec.act
        if act != "none":
            layers.append(eval(ACTIVATIONS[act].module_src, {"torch": torch}))
    return torch.nn.Sequential(*layers)


def build_fused(mod, weights, biases) -> torch.nn.Module:
    """The generated module's FusedMLP holding copies of the given weights."""
    w0 = weights[0]
    fused = mod.FusedMLP(device=w0.device, dtype=w0.dtype)
    with torch.no_grad():
        for i, lin in enumerate(fused.linears):
            lin.weight.copy_(weights[i])
            if biases is not None:
                lin.bias.copy_(biases[i])
    return fused


@dataclass
class Prepared:
    call: Callable[[], object]  # one forward, result discarded (what is timed)
    output: Callable[[], torch.Tensor]  # one forward, result kept (what is checked)
    compile_s: float | None = None
    keep: object = None  # the graph and its buffers, alive as long as this


def capture(model: Callable, x: torch.Tensor) -> Prepared:
    """`model(x)` captured in a CUDA graph (warmed up on a side stream first, as PyTorch's
    documentation prescribes); replaying it reruns the same kernels on the same buffers."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            model(x)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = model(x)

    def output():
        graph.replay()
        return y.clone()

    return Prepared(call=graph.replay, output=output, keep=(graph, x, y))


class Models:
    """The contenders' models, built once; `prepare` readies one for one input."""

    def __init__(self, spec: MLPSpec, mod, weights, biases):
        self.seq = build_sequential(spec, weights, biases)
        self.fused = build_fused(mod, weights, biases)
        self.compiled: dict[str, Callable] = {}

    def compiled_for(self, mode: str) -> Callable:
        """One torch.compile per mode, on its own copy of the model. dynamic=False: every batch
        size is traced and compiled (and max-autotune tuned) on its first call."""
        if mode not in self.compiled:
            allow_many_recompiles()
            self.compiled[mode] = torch.compile(
                copy.deepcopy(self.seq), mode=None if mode == "default" else mode, dynamic=False
            )
        return self.compiled[mode]

    def prepare(self, contender: Contender, x: torch.Tensor, sync: Callable) -> Prepared:
        if contender.compile_mode:
            model = self.compiled_for(contender.compile_mode)
            t0 = time.perf_counter()
            model(x)  # compiles for this shape
            model(x)  # max-autotune: records its CUDA graph
            sync()
            return Prepared(
                call=partial(model, x),
                output=lambda: model(x).clone(),
                compile_s=time.perf_counter() - t0,
            )
        model = self.fused if contender.name.startswith("mlpgen") else self.seq
        if contender.graph:
            return capture(model, x)
        return Prepared(call=partial(model, x), output=partial(model, x))


def allow_many_recompiles() -> None:
    """dynamic=False compiles once per batch size; dynamo's default limit (8) would silently
    fall back to eager past the 8th."""
    import torch._dynamo.config as dc

    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(dc, name):
            setattr(dc, name, max(getattr(dc, name), 256))
    for name in ("accumulated_recompile_limit", "accumulated_cache_size_limit"):
        if hasattr(dc, name):
            setattr(dc, name, max(getattr(dc, name), 4096))


# ---------------------------------------------------------------- timing


def host_time_us(
    call: Callable[[], object],
    sync: Callable[[], None],
    loop_s: float = 0.015,
    loops: int = 7,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Per-call time: loops of n calls each followed by one sync; the median over loops.
    n is sized so that a loop takes about loop_s; one untimed loop warms up first."""
    sync()
    t0 = clock()
    for _ in range(3):
        call()
    sync()
    per = max((clock() - t0) / 3, 1e-7)
    n = max(5, min(10_000, int(loop_s / per)))
    samples = []
    for i in range(loops + 1):
        t0 = clock()
        for _ in range(n):
            call()
        sync()
        if i:  # the first loop is a warm-up
            samples.append((clock() - t0) / n)
    return statistics.median(samples) * 1e6


GPU_TIME = (  # how gpu_time_us times: recorded in each run's settings
    "median of one call between CUDA events, the L2 flushed before each and the GPU kept busy "
    "over the call's launch; graph contenders: graph replay"
)
FLUSH_BYTES = 256 << 20  # what triton's do_bench zeroes to flush the L2 (larger than an L2)
SPIN_US = (20.0, 1000.0)  # the spin before a timed call: twice its host time, within these


@functools.cache
def spin_cycles_per_us(device_index: int) -> float:
    """torch.cuda._sleep's cycles per µs on this GPU, measured once."""
    start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
    torch.cuda._sleep(10_000)
    start.record()
    torch.cuda._sleep(2_000_000)
    end.record()
    end.synchronize()
    return 2_000_000 / (start.elapsed_time(end) * 1e3)


def gpu_time_us(call: Callable[[], object], warmup_ms: int, rep_ms: int, host_us: float) -> float:
    """The median GPU time of one call: CUDA events recorded right before and after it, the L2
    flushed before each (as triton's do_bench does), then the GPU kept busy by a spin of twice
    the call's host time. do_bench without the spin times the host's launch too wherever it
    outlasts the flush: eager's call at batch 1 took 38.98 µs that way against 12.00 with
    the GPU kept busy (run202)."""
    flush = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")
    spin_us = min(max(2 * host_us, SPIN_US[0]), SPIN_US[1])
    spin = int(spin_cycles_per_us(torch.cuda.current_device()) * spin_us)

    def timed(start=None, end=None):
        flush.zero_()
        torch.cuda._sleep(spin)
        if start is not None:
            start.record()
        call()
        if end is not None:
            end.record()

    events = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    events[0].record()
    for _ in range(5):  # how many fit in rep_ms, as do_bench estimates it
        timed()
    events[1].record()
    torch.cuda.synchronize()
    each_ms = max(events[0].elapsed_time(events[1]) / 5, 1e-3)
    for _ in range(max(1, int(warmup_ms / each_ms))):
        call()
    n = max(5, int(rep_ms / each_ms))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for start, end in zip(starts, ends):
        timed(start, end)
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) * 1e3


def environment(mod, device: torch.device) -> dict:
    import triton

    env = {
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "mlpgen": mlpgen.__version__,
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
    }
    if device.type == "cuda":
        p = torch.cuda.get_device_properties(device)
        env.update(
            gpu=p.name,
            gpu_key=mod.gpu_key(device),
            cuda=torch.version.cuda,
            tuned_for_this_gpu=mod.gpu_key(device) in mod.TUNED,
        )
    else:
        env.update(gpu=None, device="cpu")
    return env


def dispatch(mod, batches: Sequence[int], key: str | None) -> dict[str, dict]:
    """What the module runs at each batch (str keys, for JSON): {"call": kernel} plus
    {"graph": kernel} where a CUDA-graph capture runs another config, and {"lane": "native"}
    where the bench's calls were taken by the native lane (asked after they ran)."""
    table = key if key in mod.TUNED else "default"
    native = native_rows(mod)
    out = {}
    for b in batches:
        call, graph = mod.config_for(b, table), mod.config_for(b, table, graph=True)
        out[str(b)] = {"call": kernel_text(call)}
        if kernel_text(graph) != out[str(b)]["call"]:
            out[str(b)]["graph"] = kernel_text(graph)
        if b in native:
            out[str(b)]["lane"] = "native"
    return out


def native_rows(mod) -> set[int]:
    """The batch sizes whose calls the module's native lane takes (none for a module generated
    before it, or where it was not built)."""
    runtime = getattr(mod, "_RT", None)
    return set() if runtime is None else runtime.native_rows()


class Progress:
    """A progress bar on stderr (a line per step when stderr is not a terminal)."""

    def __init__(self, total: int, stream=None):
        self.total, self.done = total, 0
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()

    def start(self, text: str) -> None:
        if self.tty:
            width = 24
            fill = width * self.done // max(self.total, 1)
            bar = "#" * fill + "." * (width - fill)
            self.stream.write(f"\r[{bar}] {self.done}/{self.total} {text:<40}")
            self.stream.flush()

    def finish(self, text: str) -> None:
        self.done += 1
        if not self.tty:
            print(f"[{self.done}/{self.total}] {text}", file=self.stream, flush=True)
        elif self.done == self.total:
            self.stream.write("\r" + " " * 80 + "\r")
            self.stream.flush()


def describe(cell: Cell) -> str:
    head = f"batch {cell.batch:>6} {cell.contender:<13}"
    if cell.status not in ("ok", "WRONG"):
        return f"{head} {cell.status}"
    times = f"{cell.host_us:.1f} us/call" if cell.host_us is not None else ""
    if cell.gpu_us is not None:
        times += f", GPU {cell.gpu_us:.1f} us"
    return f"{head} {times}" + ("  WRONG" if cell.status == "WRONG" else "")


# ---------------------------------------------------------------- the run


def phases(contenders: Sequence[Contender]) -> list[list[Contender]]:
    """The order of the run: the quick contenders at every batch size first, then each
    torch.compile mode at every batch size, so that a --budget cuts the slow ones short."""
    quick = [c for c in contenders if not c.compile_mode]
    return [quick] + [[c] for c in contenders if c.compile_mode]


def run_bench(
    path: Path,
    batches: Sequence[int] | None = None,
    contenders: Sequence[Contender] = CONTENDERS,
    warmup_ms: int = 25,
    rep_ms: int = 100,
    budget_s: float | None = None,
    seed: int = 0,
    device: str = "cuda",
    command: str | None = None,
    progress: bool = True,
) -> dict:
    """Measure every contender at every batch size; returns the JSON-ready result.
    `device="cpu"` runs the non-graph contenders without GPU times (for tests of the plumbing)."""
    spec, tuned, _ = read_module(path)
    from mlpgen.selfcheck import load_module

    mod = load_module(path)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    env = environment(mod, dev)
    if batches is None:
        batches = default_batches(tuned, env.get("gpu_key"))
    dtype = TORCH_DTYPE[spec.dtype]
    _, weights, biases = random_problem(spec, 1, device=dev, seed=seed)
    models = Models(spec, mod, weights, biases)
    gen = torch.Generator(device="cpu").manual_seed(seed + 1)
    inputs = {
        b: torch.randn(b, spec.widths[0], generator=gen).to(device=dev, dtype=dtype)
        for b in batches
    }
    expected: dict[int, torch.Tensor] = {}  # eager's output, else the fp32 reference
    bar = Progress(len(batches) * len(contenders)) if progress else None
    started = time.perf_counter()
    cells: list[Cell] = []
    with torch.no_grad():
        for phase in phases(contenders):
            for batch in batches:
                x = inputs[batch]
                for contender in phase:
                    if bar:
                        bar.start(f"batch {batch} {contender.name}")
                    if budget_s is not None and time.perf_counter() - started > budget_s:
                        cell = Cell(batch, contender.name, f"skipped: over --budget {budget_s:g} s")
                    else:
                        if batch not in expected and contender.name != BASELINE:
                            expected[batch] = reference(spec, x, weights, biases)
                        cell, out = measure_cell(
                            models,
                            contender,
                            x,
                            expected.get(batch),
                            spec.dtype,
                            sync,
                            cuda,
                            warmup_ms,
                            rep_ms,
                        )
                        if contender.name == BASELINE and cell.status == "ok":
                            expected[batch] = out
                        del out
                    cells.append(cell)
                    if bar:
                        bar.finish(describe(cell))
                if cuda:
                    torch.cuda.empty_cache()
    del inputs, expected
    order = {c.name: i for i, c in enumerate(contenders)}
    cells.sort(key=lambda c: (c.batch, order[c.contender]))
    add_speedups(cells)
    return {
        "command": command,
        "module": str(path),
        "name": spec.name,
        "spec": spec.to_dict(),
        "env": env,
        "settings": {
            "warmup_ms": warmup_ms,
            "rep_ms": rep_ms,
            "seed": seed,
            "budget_s": budget_s,
            "grad": "every contender runs under torch.no_grad()",
            "order": "eager, graphs and mlpgen at every batch size first, then each "
            "torch.compile mode at every batch size",
            "host_time": "median over loops of calls followed by one synchronize",
            "gpu_time": GPU_TIME,
            "compile": "one torch.compile per mode, dynamic=False: each batch size is compiled "
            "on its first call; compile_s is that time and is not in the timings",
        },
        "contenders": [asdict(c) for c in contenders],
        "batches": list(batches),
        "dispatch": dispatch(mod, batches, env.get("gpu_key")),
        "results": [asdict(c) for c in cells],
    }


def measure_cell(
    models: Models,
    contender: Contender,
    x: torch.Tensor,
    expected: torch.Tensor | None,
    dtype: str,
    sync: Callable[[], None],
    cuda: bool,
    warmup_ms: int,
    rep_ms: int,
) -> tuple[Cell, torch.Tensor | None]:
    """One contender at one batch: check its output, then time it. Returns the cell and the
    checked output (the baseline's becomes the expected output of the others)."""
    cell = Cell(x.shape[0], contender.name, "ok")
    prepared = out = None
    try:
        if contender.graph and not cuda:
            raise RuntimeError("CUDA graphs need a CUDA device")
        prepared = models.prepare(contender, x, sync)
        cell.compile_s = prepared.compile_s
        out = prepared.output()
        sync()
        if contender.name == BASELINE:
            cell.rel_err = 0.0
        else:
            cell.status, cell.rel_err = verdict(out, expected, dtype)
            out = None
        cell.host_us = host_time_us(prepared.call, sync, loop_s=rep_ms / 1e3 / 7)
        if cuda:
            cell.gpu_us = gpu_time_us(prepared.call, warmup_ms, rep_ms, cell.host_us)
    except Exception as e:  # a contender's failure is a result, not the end of the run
        cell.status = failure(e)
        cell.host_us = cell.gpu_us = None
        out = None
    del prepared
    return cell, out
