"""`mlpgen bench`: the generated module side by side with eager PyTorch, CUDA graphs and
torch.compile, per batch size, on the GPU at hand.

Every contender runs the same weights on the same fresh random input per batch. Its output is
checked element-wise against the fp32 reference (verify.check: within the dtype's tolerance,
else WRONG) before it is timed; eager nn.Sequential is checked too. Two times per cell, by
mlpgen.timing's method, the tuner's timing too:
- per-call time: loops of back-to-back calls, each followed by one synchronize; the median
  over loops. What a caller sees: host overhead and GPU work, whichever is longer.
- GPU time: bursts of back-to-back calls between CUDA events, the L2 flushed before each burst
  and the GPU kept busy over its launch, so the host's time never shows; for graph contenders
  replays of the captured graph.
Each time comes with its spread (interquartile range over the median of its samples). At a
batch size the contenders are timed together in interleaved rounds (timing.time_calls), so
that a slow spell of the host falls on all alike and the speedups between them hold.
A contender that fails (compile error, out of memory, ...) is recorded as "failed: reason" and
the run goes on. The result is a plain dict (JSON) that `mlpgen.report` turns into tables and a
plot; the pure parts (speedups, merging runs) are at the top of this file. With
mlpgen.train_bench's TrainModels (`mlpgen bench --train`) each contender runs a training step
instead, its gradients checked too, and a WRONG one is not timed.
"""

from __future__ import annotations

import copy
import datetime
import math
import platform
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
from mlpgen.timing import time_call, time_calls
from mlpgen.verify import Check, check, random_problem, reference

BASELINE = "eager"
ROUNDS = 4  # interleaved rounds of timing a batch's contenders (timing.time_calls), by default


@dataclass(frozen=True)
class Contender:
    name: str
    label: str
    graph: bool = False  # captured once per batch in a CUDA graph, timed by replay
    compile_mode: str | None = None  # torch.compile mode ("default", "max-autotune")
    # a training step's part that no MLP changes: its loss and the loss's backward on eager's
    # output (a leaf), timed beside the steps but not checked (it computes no MLP); --train only
    floor: bool = False


CONTENDERS = (
    Contender("eager", "eager nn.Sequential"),
    Contender("eager+graph", "eager nn.Sequential in a CUDA graph", graph=True),
    Contender("compile", "torch.compile (default)", compile_mode="default"),
    Contender("max-autotune", 'torch.compile(mode="max-autotune")', compile_mode="max-autotune"),
    Contender("mlpgen", "generated module (FusedMLP)"),
    Contender("mlpgen+graph", "generated module in a CUDA graph", graph=True),
    Contender("loss", "the loss and its backward alone, no MLP", floor=True),
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
    err: float | None = None  # the worst element's error over its tolerance (verify.check)
    errs: dict[str, float] | None = None  # --train: err of the output and of each gradient
    reason: str | None = None  # why the output is WRONG
    compile_s: float | None = None
    host_speedup: float | None = None
    gpu_speedup: float | None = None
    host_spread: float | None = None  # interquartile range / median of the samples
    gpu_spread: float | None = None


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
        for key, what in (("name", "module"), ("env.gpu", "GPU"), ("train", "bench (--train)")):
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
    if len(methods) > 1:  # runs recorded before and after the GPU time method changed
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


def pick_contenders(
    only: Sequence[str] | None, no_compile: bool, train: bool = False
) -> tuple[Contender, ...]:
    """The contenders to run, in table order; the eager baseline always runs, a training
    step's floor only with train."""
    if only:
        unknown = [n for n in only if n not in BY_NAME]
        if unknown:
            raise ValueError(f"unknown contender {unknown[0]!r}; choose from {', '.join(BY_NAME)}")
        floors = [n for n in only if BY_NAME[n].floor and not train]
        if floors:
            raise ValueError(f"contender {floors[0]!r} is a training step's part: use --train")
    chosen = [
        c
        for c in CONTENDERS
        if (not only or c.name in only or c.name == BASELINE)
        and not (no_compile and c.compile_mode)
        and (train or not c.floor)
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
    call: Callable[[], object]  # one run, result discarded (what is timed)
    output: Callable[[], object]  # one run, its tensor (or tuple of tensors) kept (checked)
    compile_s: float | None = None
    keep: object = None  # the graph and its buffers, alive as long as this


def clone(result):
    """A copy of a tensor or of a tuple of tensors, safe from the next run's writes."""
    return tuple(t.clone() for t in result) if isinstance(result, tuple) else result.clone()


def capture(run: Callable[[], object]) -> Prepared:
    """`run()` captured in a CUDA graph (warmed up on a side stream first, as PyTorch's
    documentation prescribes); replaying it reruns the same kernels on the same buffers."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            run()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        result = run()

    def output():
        graph.replay()
        return clone(result)

    return Prepared(call=graph.replay, output=output, keep=(graph, run, result))


class Models:
    """The contenders' models, built once; `prepare` readies one for one input, `expected` is
    the fp32 reference for that input and `verdict` checks a contender's output against it."""

    time_wrong = True  # a WRONG output is still timed (the table shows it as WRONG)
    train = False  # each call a forward (no autograd), not a training step

    def environment(self, mod, batches: Sequence[int], device) -> dict:
        """What a run of these models adds to its environment record (a forward: nothing)."""
        return {}

    def __init__(self, spec: MLPSpec, mod, weights, biases):
        self.spec, self.weights, self.biases = spec, weights, biases
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
            return capture(partial(model, x))
        return Prepared(call=partial(model, x), output=partial(model, x))

    def expected(self, x: torch.Tensor) -> torch.Tensor:
        return reference(self.spec, x, self.weights, self.biases)

    def verdict(self, output: torch.Tensor, expected: torch.Tensor) -> Check:
        return check(output, expected, self.spec.dtype)


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

HOST_TIME = "median over loops of back-to-back calls, each loop followed by one synchronize"
GPU_TIME = (  # how gpu_us is timed: recorded in each run's settings
    "median per call of bursts of back-to-back calls between CUDA events, the L2 flushed before "
    "each burst and the GPU kept busy over the burst's launch (mlpgen.timing); graph contenders: "
    "graph replays"
)


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
    models_type: type[Models] | None = None,
    rounds: int | None = None,
) -> dict:
    """Measure every contender at every batch size; returns the JSON-ready result.
    models_type: what each contender runs, Models (a forward, the default) or a subclass
    (mlpgen.train_bench.TrainModels: a training step). `device="cpu"` runs the non-graph
    contenders without GPU times (for tests of the plumbing). rounds: interleaved rounds of a
    batch's contenders (measure_cells; None: ROUNDS)."""
    spec, tuned, _ = read_module(path)
    from mlpgen.selfcheck import load_module

    mod = load_module(path)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    env = environment(mod, dev)
    if batches is None:
        batches = default_batches(tuned, env.get("gpu_key"))
    _, weights, biases = random_problem(spec, 1, device=dev, seed=seed)
    models = (models_type or Models)(spec, mod, weights, biases)
    env.update(models.environment(mod, batches, dev))
    train = models.train
    rounds = rounds or ROUNDS
    contenders = [c for c in contenders if train or not c.floor]  # a training step's part
    inputs = {b: random_problem(spec, b, dev, seed + 1 + i)[0] for i, b in enumerate(batches)}
    expected: dict[int, object] = {}  # the fp32 reference
    bar = Progress(len(batches) * len(contenders)) if progress else None
    started = time.perf_counter()
    cells: list[Cell] = []
    with torch.enable_grad() if train else torch.no_grad():
        for phase in phases(contenders):
            for batch in batches:
                x = inputs[batch]
                if bar:
                    bar.start(f"batch {batch} " + ", ".join(c.name for c in phase))
                if budget_s is not None and time.perf_counter() - started > budget_s:
                    skip = f"skipped: over --budget {budget_s:g} s"
                    group = [Cell(batch, c.name, skip) for c in phase]
                else:
                    if batch not in expected:
                        expected[batch] = models.expected(x)
                    group = measure_cells(
                        models, phase, x, expected[batch], sync, cuda, warmup_ms, rep_ms, rounds
                    )
                cells += group
                for cell in group:
                    if bar:
                        bar.finish(describe(cell))
                if cuda:
                    torch.cuda.empty_cache()
    del inputs, expected
    order = {c.name: i for i, c in enumerate(contenders)}
    cells.sort(key=lambda c: (c.batch, order[c.contender]))
    add_speedups(cells)
    settings = {
        "warmup_ms": warmup_ms,
        "rep_ms": rep_ms,
        "seed": seed,
        "budget_s": budget_s,
        "grad": "every contender runs under torch.no_grad()",
        "order": "eager, graphs and mlpgen at every batch size first, timed together in "
        f"{rounds} interleaved rounds per batch size, then each torch.compile mode at every "
        "batch size",
        "host_time": HOST_TIME,
        "gpu_time": GPU_TIME,
        "compile": "one torch.compile per mode, dynamic=False: each batch size is compiled "
        "on its first call; compile_s is that time and is not in the timings",
    }
    if train:
        settings.update(models.settings(batches))
    return {
        "command": command,
        "module": str(path),
        "name": spec.name,
        "train": train,
        "spec": spec.to_dict(),
        "env": env,
        "settings": settings,
        "contenders": [asdict(c) for c in contenders],
        "batches": list(batches),
        "dispatch": dispatch(mod, batches, env.get("gpu_key")),
        "results": [asdict(c) for c in cells],
    }


def measure_cells(
    models: Models,
    contenders: Sequence[Contender],
    x: torch.Tensor,
    expected: object,
    sync: Callable[[], None],
    cuda: bool,
    warmup_ms: int,
    rep_ms: int,
    rounds: int = ROUNDS,
) -> list[Cell]:
    """The contenders at one batch: each checked against the fp32 reference (models.verdict),
    then those to time (ok, or WRONG where models.time_wrong) timed together in `rounds`
    interleaved rounds (timing.time_calls), so that the host's slow spells fall on all alike.
    A contender that fails is a result (its cell's status), not the end of the run; where the
    timing together fails, each is timed alone. Every contender's prepared state (its graph
    and buffers) stays alive until the batch is timed."""
    cells, timed = [], {}
    for contender in contenders:
        cell = Cell(x.shape[0], contender.name, "ok")
        cells.append(cell)
        try:
            if contender.graph and not cuda:
                raise RuntimeError("CUDA graphs need a CUDA device")
            prepared = models.prepare(contender, x, sync)
            cell.compile_s = prepared.compile_s
            if contender.floor:  # it computes no MLP: nothing to check
                timed[len(cells) - 1] = prepared
                continue
            result = models.verdict(prepared.output(), expected)
            sync()
            cell.err = result.err
            cell.errs = getattr(result, "errs", None)
            if not result.ok:
                cell.status, cell.reason = "WRONG", result.reason
            if result.ok or models.time_wrong:
                timed[len(cells) - 1] = prepared
        except Exception as e:  # a contender's failure is a result, not the end of the run
            mark_failed(cell, e)
    loops = 2 * rounds  # rep_ms of host loops in all, in more samples as the rounds grow
    budget = dict(loop_s=rep_ms / 1e3 / loops, loops=loops, warmup_ms=warmup_ms, rep_ms=rep_ms)
    calls = {i: p.call for i, p in timed.items()}
    try:
        times = time_calls(calls, cuda, sync, rounds, **budget)
    except Exception:  # one contender's failure (out of memory, say): each alone
        times = {}
        for i, call in calls.items():
            try:
                times[i] = time_call(call, cuda, sync, **budget)
            except Exception as e:
                mark_failed(cells[i], e)
    for i, t in times.items():
        cell = cells[i]
        cell.host_us, cell.host_spread, cell.gpu_us, cell.gpu_spread = (
            t.host_us, t.host_spread, t.gpu_us, t.gpu_spread
        )  # fmt: skip
    return cells


def mark_failed(cell: Cell, e: Exception) -> None:
    """The cell of a contender that raised e: its status says why, it has no times."""
    cell.status = failure(e)
    cell.host_us = cell.gpu_us = cell.host_spread = cell.gpu_spread = None
