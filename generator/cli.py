"""`mlpgen` command line: generate (and tune) a module, retune it on a new GPU, show, bench and
profile it.

Every subcommand keeps one promise: bad input exits 2 with one line on stderr and creates or
changes nothing. Every input is checked before the first file is written; numbers are ASCII
digits, finite and within bounds; a file given as a module must be an mlpgen module (its header,
SPEC and TUNED read with `ast`) before anything imports it (mlpgen.cli_input checks them).
Ctrl-C exits 130 with one line.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from mlpgen.cli_input import (
    MAX_BATCH,
    MAX_SEED,
    MAX_TRIALS,
    MAX_WORKERS,
    Flags,
    Parser,
    UsageError,
    batches_arg,
    checked_out_dir,
    checked_path,
    checked_storage,
    existing_module,
    integer,
    load_runs,
    one_of,
    output_file,
    parse_widths,
    probe,
    seconds,
)
from mlpgen.module_file import one_line, short

if TYPE_CHECKING:
    from mlpgen.spec import MLPSpec

# Beside mlpgen.cli_input and mlpgen.module_file (the standard library only), mlpgen (and torch
# with it) is imported inside the functions: `main` is entered within milliseconds, so that a
# Ctrl-C while torch loads is caught there too.

COMMANDS_HELP = """commands:
  mlpgen --widths W,W,... [options]   generate (and on a GPU tune) a module
  mlpgen retune MODULE                tune a module for this GPU
  mlpgen show MODULE                  print a module's spec and tuned configs
  mlpgen bench MODULE                 time a module against eager, CUDA graphs, torch.compile
  mlpgen profile MODULE --batch N     eager vs the module under torch.profiler
  mlpgen scan FILE:FACTORY            list the MLP blocks mlpgen.fuse would replace
Run `mlpgen COMMAND --help` for a command's options."""


class Terminated(Exception):
    """SIGTERM arrived: unwound like Ctrl-C so that temporary files are removed."""


# ---------------------------------------------------------------------------------------------
# generate and retune


def add_tune_options(p: argparse.ArgumentParser, search_title: str = "search") -> Flags:
    """--batches, the flags that steer the search (returned: --no-tune refuses them) and --json."""
    from mlpgen.space import DEFAULT_BUCKETS

    p.add_argument(
        "--batches",
        type=batches_arg,
        default=DEFAULT_BUCKETS,
        help=f"batch-size buckets to tune, 1..{MAX_BATCH} "
        f"(default: {','.join(map(str, DEFAULT_BUCKETS))})",
    )
    search = Flags(p, search_title)
    search.add_argument(
        "--trials",
        type=integer(1, MAX_TRIALS),
        default=None,
        help="candidates measured per bucket (default: a quarter of each bucket's space, 12 to 48)",
    )
    search.add_argument(
        "--timeout", type=seconds, default=None, help="stop searching after this many seconds"
    )
    search.add_argument(
        "--storage",
        default=None,
        help="Optuna storage: a database URL or a journal file "
        "(default: <name>.optuna.journal beside the module)",
    )
    search.add_argument(
        "--workers",
        type=integer(1, MAX_WORKERS),
        default=1,
        help="tuning workers, one per visible GPU",
    )
    search.add_argument("--seed", type=integer(0, MAX_SEED), default=0, help="sampler seed")
    search.add_argument(
        "--exhaustive",
        action="store_true",
        help="measure every feasible candidate of every bucket, ignoring --trials",
    )
    search.add_argument(
        "--candidate-timeout",
        type=seconds,
        default=30.0,
        help="seconds one candidate may take before it counts as hung (default: %(default)s)",
    )
    search.add_argument(
        "--bucket-timeout",
        type=seconds,
        default=None,
        help="seconds of measuring one bucket may take (default: no cap)",
    )
    search.add_argument(
        "--train",
        action="store_true",
        help="also search each bucket's training step: the torch backward or training kernel "
        "configs, the faster beyond the noise (about doubles the tuning time)",
    )
    p.add_argument("--json", action="store_true", help="print a machine-readable summary")
    return search


def tune_options(args: argparse.Namespace):
    """The tuner's typed options from the parsed command line."""
    from mlpgen.tune import TuneOptions

    return TuneOptions(
        buckets=tuple(args.batches),
        trials=args.trials,
        timeout=args.timeout,
        storage=args.storage,
        workers=args.workers,
        seed=args.seed,
        exhaustive=args.exhaustive,
        candidate_timeout=args.candidate_timeout,
        bucket_timeout=args.bucket_timeout,
        train=args.train,
    )


def generate_parser() -> Parser:
    from mlpgen import __version__
    from mlpgen.activations import ACTIVATIONS
    from mlpgen.spec import DTYPES

    p = Parser(
        prog="mlpgen",
        description="Generate and tune a fused Triton kernel for an MLP.",
        epilog=COMMANDS_HELP,
    )
    p.add_argument("--version", action="version", version=f"mlpgen {__version__}")
    p.add_argument("--widths", required=True, help="layer widths, e.g. 256,512,256")
    p.add_argument(
        "--act",
        type=one_of(tuple(ACTIVATIONS), "act"),
        default="gelu",
        help=f"hidden activation: {', '.join(ACTIVATIONS)}",
    )
    p.add_argument(
        "--out-act",
        type=one_of(tuple(ACTIVATIONS), "out_act"),
        default="none",
        help="activation after the last layer",
    )
    p.add_argument(
        "--dtype", type=one_of(DTYPES, "dtype"), default="fp16", help=f"one of {', '.join(DTYPES)}"
    )
    p.add_argument("--no-bias", action="store_true", help="layers without bias")
    p.add_argument("--out", default="tuned", help="output folder (default: tuned/)")
    p.add_argument("--no-tune", action="store_true", help="write the heuristic default only")
    p.search = add_tune_options(p, "search (not with --no-tune)")
    return p


def ensure_package(out: Path) -> None:
    """Make `import <out>.<name>` work from the working directory."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        init = out / "__init__.py"
        if not init.exists():
            init.write_text('"""Modules generated by mlpgen."""\n')
    except OSError as e:
        raise UsageError(f"--out {short(out)}: {e.strerror}") from None


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def interpreter_check(path: Path, spec: MLPSpec, buckets) -> dict:
    """Run the module's kernel on the CPU through Triton's interpreter against the reference.
    A bf16 module is checked through its fp16 twin (the same kernels but for the element type):
    the interpreter's bf16 tl.dot returns garbage (tests/test_kernel_interpret.py)."""
    from mlpgen.emit import module_path, write_module

    if spec.dtype == "bf16":
        twin = dataclasses.replace(spec, dtype="fp16")
        with tempfile.TemporaryDirectory(prefix="mlpgen-check-") as tmp:
            twin_path = write_module(module_path(Path(tmp), twin), twin, buckets=buckets)
            return interpreter_check(twin_path, twin, buckets) | {"checked_as": "fp16"}
    proc = subprocess.run(  # mlpgen.children: the check dies with this process
        [sys.executable, "-m", "mlpgen.children", str(os.getpid()), "mlpgen.selfcheck"]
        + [str(path), "37"],
        env=dict(os.environ, TRITON_INTERPRET="1"),
        capture_output=True,
        text=True,
        check=False,
    )
    lines = proc.stdout.strip().splitlines()
    if not lines:
        return {"ok": False, "error": proc.stderr.strip().splitlines()[-1:]}
    return json.loads(lines[-1])


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cmd_generate(argv: list[str]) -> int:
    from mlpgen.emit import DEFAULT_KEY, module_path, read_module, write_module
    from mlpgen.space import heuristic_config
    from mlpgen.spec import MLPSpec

    parser = generate_parser()
    args = parser.parse_args(argv)
    if args.no_tune and (given := parser.search.given(args)):
        raise UsageError(f"--no-tune searches nothing: drop {', '.join(given)}")
    spec = MLPSpec(
        widths=parse_widths(args.widths),
        act=args.act,
        out_act=args.out_act,
        dtype=args.dtype,
        bias=not args.no_bias,
    )
    checked_storage(args.storage)
    out = checked_out_dir(args.out)
    path = module_path(out, spec)
    if probe(path, "--out"):
        _, old, _, _ = existing_module(str(path))  # refuse to overwrite what is not ours
        if old != spec:
            raise UsageError(f"{short(path)} holds {old.name}, not {spec.name}")
    ensure_package(out)
    before = path.read_text() if path.exists() else None
    write_module(path, spec, buckets=args.batches)
    tables = read_module(path)[1]
    # fused: some bucket's default config is a kernel (the heuristic picks the torch path for
    # large batches of wide MLPs, and wherever no kernel fits), over every bucket the module
    # has (a run over some buckets keeps the others)
    buckets = sorted(tables[DEFAULT_KEY])
    fused = any(heuristic_config(spec, b).strategy != "torch" for b in buckets)
    summary = {
        "module": str(path),
        "spec": spec.to_dict(),
        "name": spec.name,
        "fused": fused,
    }
    if not fused:
        log(f"mlpgen: no fused kernel fits this spec; {path} uses the torch path for now")
    log(f"mlpgen: {path} is up to date" if path.read_text() == before else f"mlpgen: wrote {path}")
    if args.no_tune:
        summary["tuned"] = False
    elif cuda_available():
        from mlpgen.train_tune import tune_with_training

        summary["tuned"] = tune_with_training(path, tune_options(args), quiet=args.json)
    else:
        summary["tuned"] = False
        if fused:
            check = interpreter_check(path, spec, buckets)
            summary["interpreter_check"] = check
            if not check.get("ok"):
                log(f"mlpgen: the kernel failed its interpreter check: {check}")
                return 1
            twin = " as its fp16 twin" if check.get("checked_as") else ""
            log(
                f"mlpgen: kernel checked on the CPU through Triton's interpreter{twin} "
                f"(worst element at {check['err']:.2g} of its tolerance, M={check['m']})"
            )
        gpus = sorted({k.split("|")[0] for k in tables if k != DEFAULT_KEY})
        uses = "the module uses the heuristic default config"
        if gpus:
            uses = f"the module keeps its tables for {', '.join(gpus)} and uses the heuristic "
            uses += "default config on other GPUs"
        log(f"mlpgen: tuning needs a CUDA GPU; {uses}. On a GPU machine run: mlpgen retune {path}")
    if args.json:
        print(json.dumps(summary, indent=2))
    return 0


def cmd_retune(argv: list[str]) -> int:
    p = Parser(prog="mlpgen retune", description="Tune an existing module for this GPU.")
    p.add_argument("path", help="a module written by mlpgen")
    add_tune_options(p)
    p.add_argument(
        "--train-only",
        action="store_true",
        help="search only each bucket's training step, keeping this GPU's forward table",
    )
    args = p.parse_args(argv)
    path, _, tables, _ = existing_module(args.path)
    checked_storage(args.storage)
    if not cuda_available():
        raise UsageError("retune needs a CUDA GPU, and none is visible")
    from mlpgen.train_tune import tune_trains, tune_with_training

    if args.train_only:
        from mlpgen.tune import gpu_key

        key = gpu_key(0)
        if key not in tables:
            raise UsageError(
                f"--train-only: {short(path)} has no forward table for {key.split('|')[0]}; "
                "run mlpgen retune without it first"
            )
        summary = {"gpu": key, "train": tune_trains(path, key, tune_options(args), args.json)}
    else:
        summary = tune_with_training(path, tune_options(args), quiet=args.json)
    if args.json:
        print(json.dumps(summary, indent=2))
    return 0


# ---------------------------------------------------------------------------------------------
# show


def _provenance_summary(prov: dict, buckets) -> str:
    """A GPU table's header note: its last tune's date and search (trials per bucket, or
    every candidate where it was exhaustive), which buckets that tune covered where they
    are not all of the table's (`buckets`): the others come from earlier tunes, whether it
    started from earlier winners, and when the training step was last searched."""
    if not isinstance(prov, dict):
        return ""
    search = "exhaustive" if prov.get("exhaustive") else ""
    if not search and prov.get("trials") is not None:
        search = f"trials {prov['trials']}"
    elif not search and "trials" in prov:
        search = "trials: a quarter of each bucket's space"
    tuned = prov.get("buckets")
    if isinstance(tuned, list) and tuned and set(tuned) != set(buckets):
        search += f" at {','.join(map(str, tuned))} (other buckets: earlier tunes)"
    parts = [f"date {prov['date']}"] if "date" in prov else []
    parts += [search.strip()] * bool(search)
    if prov.get("seeded"):  # mlpgen retune: the GPU's earlier winners measured first
        parts.append(f"from {prov['seeded']} earlier cells")
    train = prov.get("train")
    if isinstance(train, dict) and train.get("date"):  # mlpgen retune --train-only
        parts.append(f"training step searched {train['date']}")
    if prov.get("heuristic_default_at"):  # emit.read_module: cells of a retired strategy
        at = ",".join(map(str, prov["heuristic_default_at"]))
        parts.append(f"heuristic default at {at} (a retired strategy's cells) until a re-tune")
    return ", ".join(parts)


def cmd_show(argv: list[str]) -> int:
    p = Parser(
        prog="mlpgen show",
        description="Print a module's spec and tuned configs (read with ast; nothing runs).",
    )
    p.add_argument("path", help="a module written by mlpgen")
    p.add_argument("--json", action="store_true", help="the spec, tables and provenance as JSON")
    args = p.parse_args(argv)
    _, spec, tuned, provenance = existing_module(args.path)
    from mlpgen.emit import graph_cell, kernel_text

    if args.json:
        print(
            json.dumps({"spec": spec.to_dict(), "tuned": tuned, "provenance": provenance}, indent=2)
        )
        return 0
    print(
        f"{spec.name}: widths {list(spec.widths)}, act {spec.act}, out_act {spec.out_act}, "
        f"dtype {spec.dtype}, bias {spec.bias}"
    )
    for key in sorted(tuned):
        extra = _provenance_summary(provenance.get(key, {}), tuned[key])
        print(f"\n[{key}]" + (f"  ({extra})" if extra else ""))
        print(show_header())
        for bucket, cell in sorted(tuned[key].items()):
            print(show_row(bucket, cell))
            graph = graph_cell(cell)
            if graph is not None:
                us = graph.get("us")
                text = kernel_text(graph) + (f"  {us:.2f} us GPU" if isnum(us) else "")
                print(f"  {'':>7}  in a CUDA graph: {text}")
            if isinstance(cell.get("train"), dict):
                print(f"  {'':>7}  training step: {train_text(cell['train'])}")
    print(
        "\nµs: GPU time and per-call host time (mlpgen.timing) of the winner and of eager "
        "nn.Sequential;\nspeedup: eager's cost over the winner's, each the larger of its two times;"
        "\ntraining step, under a bucket: the step (forward and backward) that won it, and the "
        "torch backward's times."
    )
    return 0


def isnum(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def larger_time(d: dict, us: str, host: str) -> float | None:
    """The larger of a cell's GPU and host times (its cost per call), or None without either."""
    return max((v for v in (d.get(us), d.get(host)) if isnum(v)), default=None)


def train_text(train: dict) -> str:
    """A TUNED cell's training step in `mlpgen show`: the kernels' tiles and options, the torch
    backward or cuBLASLt's step, its times, the torch backward's where it lost to them, and the
    step a CUDA-graph capture runs where it is another."""

    def times(prefix=""):
        us, host = train.get(f"{prefix}us"), train.get(f"{prefix}host_us")
        parts = [f"{us:.2f} us GPU"] if isnum(us) else []
        parts += [f"{host:.2f} us host"] if isnum(host) else []
        return ", ".join(parts), larger_time(train, f"{prefix}us", f"{prefix}host_us")

    from mlpgen.training import FLAGS

    what = {"torch": "torch backward", "cublaslt": "cuBLASLt GEMMs"}.get(train.get("backward"))
    if what is None:
        tiles = "x".join(str(train.get(k, "?")) for k in ("block_m", "block_n", "block_k"))
        flags = [f"split {train['split']}"] * (train.get("split", 1) > 1)
        flags += [name for name in FLAGS if train.get(name)]
        what = f"kernels {tiles}, warps {train.get('num_warps')}, stages {train.get('num_stages')}"
        what += "".join(f", {f}" for f in flags)
    ours, cost = times()
    text = f"{what}  {ours}" if ours else what
    torch_times, torch_cost = times("torch_")
    if torch_times:
        speedup = f": {torch_cost / cost:.2f}x" if cost and torch_cost else ""
        text += f" (torch backward: {torch_times}{speedup})"
    if isinstance(train.get("graph"), dict):
        text += f"; in a CUDA graph: {train_text(train['graph'])}"
    return text


def show_header() -> str:
    return (
        f"  {'bucket':>7}  {'kernel':<34} {'warps':>5} {'stages':>6} {'gpu':>8} {'host':>8} "
        f"{'eager':>8} {'eager_host':>10} {'speedup':>7}"
    )


def show_row(bucket: int, cell: dict) -> str:
    """One bucket of `mlpgen show`: the winning kernel, its times and eager's."""

    def num(name, width=8):
        v = cell.get(name)
        return f"{v:{width}.2f}" if isnum(v) else f"{'-':>{width}}"

    from mlpgen.emit import kernel_text

    ours, eager = larger_time(cell, "us", "host_us"), larger_time(cell, "eager_us", "eager_host_us")
    speedup = f"{eager / ours:6.2f}x" if ours and eager else f"{'-':>7}"
    kernel = kernel_text(cell)
    return (
        f"  {bucket:>7}  {kernel:<34} {cell.get('num_warps', '-'):>5} "
        f"{cell.get('num_stages', '-'):>6} "
        f"{num('us')} {num('host_us')} {num('eager_us')} {num('eager_host_us', 10)} {speedup}"
    )


# ---------------------------------------------------------------------------------------------
# bench and profile: these import and run the module


RUNS_IT = (
    "This imports and runs the module's code: use it on modules you trust. The file is first "
    "checked (without running it) to be an mlpgen module."
)


def command_line(argv: list[str]) -> str:
    import shlex

    return "mlpgen " + shlex.join(argv)


def module_failed(path: Path, e: Exception) -> UsageError:
    return UsageError(f"{short(path)}: the module failed when run: {one_line(e)}")


def cmd_bench(argv: list[str]) -> int:
    from mlpgen import bench, report

    p = Parser(
        prog="mlpgen bench",
        description="Time a module against eager, CUDA graphs and torch.compile, per batch: its\n"
        "forward, or with --train a training step of the MLP alone (forward, loss, backward).\n"
        + RUNS_IT,
    )
    p.add_argument("path", nargs="?", help="a module written by mlpgen")
    measuring = Flags(p, "measuring (not with --load)")
    measuring.add_argument(
        "--batches", type=batches_arg, default=None, help="default: the module's buckets"
    )
    measuring.add_argument("--only", default=None, help=f"contenders: {','.join(bench.BY_NAME)}")
    measuring.add_argument("--no-compile", action="store_true", help="skip torch.compile (slow)")
    measuring.add_argument(
        "--train",
        action="store_true",
        help="time a training step (forward, loss, backward) instead of a forward",
    )
    measuring.add_argument(
        "--warmup", type=integer(1, 60_000), default=25, help="GPU-time warm-up, ms"
    )
    measuring.add_argument(
        "--rep", type=integer(1, 600_000), default=100, help="timing per cell, ms"
    )
    measuring.add_argument(
        "--rounds",
        type=integer(1, 64),
        default=None,
        help="interleaved rounds of a batch's contenders (default 4; more: more samples)",
    )
    measuring.add_argument("--budget", type=seconds, default=None, help="stop after seconds")
    measuring.add_argument("--seed", type=integer(0, MAX_SEED), default=0)
    p.add_argument("--json", action="store_true", help="raw numbers on stdout, table on stderr")
    p.add_argument("--plot", default=None, metavar="FILE.png", help="latency-vs-batch chart")
    p.add_argument(
        "--load", action="append", default=[], metavar="FILE.json", help="show recorded runs"
    )
    args = p.parse_args(argv)
    plot = output_file(args.plot, "--plot")
    if plot is not None:
        try:
            report.require_plot_file(plot)
        except report.PlotUnavailable as e:
            raise UsageError(str(e)) from None
    if args.load:
        if args.path:
            raise UsageError("give a module to measure or --load recorded runs, not both")
        if given := measuring.given(args):
            verb = "measures" if len(given) == 1 else "measure"
            raise UsageError(
                f"{', '.join(given)} {verb} a module; --load re-prints recorded runs as run"
            )
        data = load_runs(args.load, "--load")
    else:
        if not args.path:
            raise UsageError("bench needs a module path (or --load FILE.json)")
        path = existing_module(args.path)[0]
        only = args.only.split(",") if args.only else None
        unknown = [name for name in only or () if name not in bench.BY_NAME]
        if unknown:
            raise UsageError(
                f"--only: unknown contender {short(unknown[0])}; "
                f"choose from {', '.join(bench.BY_NAME)}"
            )
        try:
            contenders = bench.pick_contenders(only, args.no_compile, args.train)
        except ValueError as e:
            raise UsageError(f"--only: {e}") from None
        if not cuda_available():
            raise UsageError("bench needs a CUDA GPU")
        models_type = None
        if args.train:
            from mlpgen.train_bench import TrainModels as models_type
        try:
            data = bench.run_bench(
                path,
                args.batches,
                contenders,
                warmup_ms=args.warmup,
                rep_ms=args.rep,
                budget_s=args.budget,
                seed=args.seed,
                command=command_line(["bench", *argv]),
                models_type=models_type,
                rounds=args.rounds,
            )
        except (KeyboardInterrupt, Terminated):
            raise
        except Exception as e:
            raise module_failed(path, e) from None
    text = report.bench_text(data)
    if args.json:
        print(json.dumps(data, indent=1))
        log(text)
    else:
        print(text)
    if plot is not None:  # after the numbers, so that a failed write loses none of them
        try:
            report.plot_bench(data, plot)
        except OSError as e:
            raise UsageError(f"--plot {short(args.plot)}: {e.strerror or e}") from None
        log(f"mlpgen: wrote {plot}")
    return 0


def cmd_profile(argv: list[str]) -> int:
    from mlpgen import report
    from mlpgen.profile import profile_module

    p = Parser(
        prog="mlpgen profile",
        description="Eager nn.Sequential vs the module under torch.profiler, side by side.\n"
        + RUNS_IT,
    )
    p.add_argument("path", help="a module written by mlpgen")
    p.add_argument("--batch", type=integer(1, MAX_BATCH), required=True, help="rows per forward")
    p.add_argument("--forwards", type=integer(1, 10_000), default=20, help="forwards per run")
    p.add_argument("--trace", default=None, metavar="FILE.json", help="write a Chrome trace")
    p.add_argument(
        "--report",
        default=None,
        metavar="FILE.md",
        help="write a markdown report (with --bench, its chart too: FILE.png beside it)",
    )
    p.add_argument(
        "--bench",
        action="append",
        default=[],
        metavar="BENCH.json",
        help="recorded `mlpgen bench --json` output to add to the report (and its plot)",
    )
    p.add_argument(
        "--train",
        action="store_true",
        help="profile training steps (forward, loss, gradients) as bench --train times them",
    )
    p.add_argument("--json", action="store_true", help="the statistics as JSON")
    args = p.parse_args(argv)
    path = existing_module(args.path)[0]
    trace = output_file(args.trace, "--trace")
    md = output_file(args.report, "--report")
    recorded = None
    if args.bench:
        if md is None:
            raise UsageError("--bench adds recorded bench results to --report FILE.md")
        recorded = load_runs(args.bench, "--bench")
    try:  # without CUDA both runs are profiled on the CPU; the report says so
        result = profile_module(
            path,
            args.batch,
            args.forwards,
            trace,
            command=command_line(["profile", *argv]),
            train=args.train,
        )
    except (KeyboardInterrupt, Terminated):
        raise
    except Exception as e:
        raise module_failed(path, e) from None
    print(json.dumps(result, indent=1) if args.json else report.profile_text(result))
    if md is not None:
        plot = None
        if recorded is not None:
            try:
                plot = report.plot_bench(recorded, md.with_suffix(".png")).name
            except report.PlotUnavailable as e:
                log(f"mlpgen: no plot in the report ({e})")
        from mlpgen.emit import atomic_write

        atomic_write(md, report.profile_markdown(result, recorded, plot))
        log(f"mlpgen: wrote {md}")
    return 0


# ---------------------------------------------------------------------------------------------
# scan: runs the user's model code


def build_model(path: Path, factory: str):
    """The nn.Module that `factory()` in the Python file at `path` returns. The file runs with
    its folder on sys.path (to import its neighbours) and without writing bytecode caches."""
    import runpy

    import torch

    name, call = short(f"{path}:{factory}"), short(f"{path}:{factory}()")
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        try:
            namespace = runpy.run_path(str(path), run_name="__mlpgen_scan__")
        except (KeyboardInterrupt, Terminated):
            raise
        except BaseException as e:  # SystemExit too: the file is not ours to exit
            raise UsageError(f"{short(path)}: failed when run: {one_line(e)}") from None
        if factory not in namespace:
            raise UsageError(f"{short(path)} defines no {short(factory)}")
        if not callable(namespace[factory]):
            raise UsageError(f"{name} is not callable")
        try:
            model = namespace[factory]()
        except (KeyboardInterrupt, Terminated):
            raise
        except BaseException as e:
            raise UsageError(f"{call} failed when run: {one_line(e)}") from None
    finally:
        sys.dont_write_bytecode = bytecode
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)
    if not isinstance(model, torch.nn.Module):
        raise UsageError(f"{call} returned a {type(model).__name__}, not an nn.Module")
    return model


def cmd_scan(argv: list[str]) -> int:
    from mlpgen.spec import DTYPES

    p = Parser(
        prog="mlpgen scan",
        description="List the MLP blocks that mlpgen.fuse(model) would replace: the specs\n"
        "it would generate, with the command that tunes each, and the modules with two or more\n"
        "Linear layers it leaves, with the reason. Nothing is written.\n"
        "This imports FILE and runs FACTORY (a function that takes no arguments and builds\n"
        "the model): use it on code you trust.",
    )
    p.add_argument("target", metavar="FILE:FACTORY", help="a Python file and a function in it")
    p.add_argument(
        "--dtype", type=one_of(DTYPES, "dtype"), default=None, help="default: the weights'"
    )
    p.add_argument("--out", default="tuned", help="where fuse finds or writes the modules")
    args = p.parse_args(argv)
    file, colon, factory = args.target.rpartition(":")
    if not colon or not file or not factory.isidentifier():
        raise UsageError(
            f"{short(args.target)}: expected FILE:FACTORY, a Python file and the name of a "
            "function in it that builds the model"
        )
    path = checked_path(file, "scan")
    if not probe(path, "scan"):
        raise UsageError(f"{short(file)}: no such file")
    if not path.is_file():
        raise UsageError(f"{short(file)}: not a regular file")
    out = checked_path(args.out, "--out")
    if probe(out, "--out") and not out.is_dir():
        raise UsageError(f"--out {short(args.out)}: exists and is not a folder")
    model = build_model(path, factory)
    from mlpgen.adopt import check_out, report_text, scan

    report = scan(model, args.dtype)
    missing = check_out(report.specs, out)  # a damaged module there: SpecError, one line
    print(report_text(report, out, missing))
    return 0


COMMANDS = {
    "retune": cmd_retune,
    "show": cmd_show,
    "bench": cmd_bench,
    "profile": cmd_profile,
    "scan": cmd_scan,
}


def dispatch(argv: list[str]) -> int:
    if not argv:
        raise UsageError(
            f"give --widths W,W,... to generate a module, or a command: {', '.join(COMMANDS)} "
            "(mlpgen --help)"
        )
    if argv[0] in COMMANDS:
        return COMMANDS[argv[0]](argv[1:])
    if not argv[0].startswith("-"):
        raise UsageError(
            f"unknown command {short(argv[0])}; choose from {', '.join(COMMANDS)} "
            "(or generate with --widths)"
        )
    return cmd_generate(argv)


def is_spec_error(e: BaseException) -> bool:
    """An invalid spec (mlpgen.spec.SpecError), which may come from any stage: one line too."""
    spec = sys.modules.get("mlpgen.spec")
    return spec is not None and isinstance(e, spec.SpecError)


def on_sigterm(signum, frame):
    raise Terminated


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    handler = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, on_sigterm) if handler else None
    try:
        return dispatch(argv)
    except UsageError as e:
        print(one_line(f"mlpgen: error: {e}"), file=sys.stderr)
        return 2
    except SystemExit as e:  # --help printed its text
        return e.code if isinstance(e.code, int) else 0
    except KeyboardInterrupt:
        print("mlpgen: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("mlpgen: terminated", file=sys.stderr)
        return 143
    except BrokenPipeError:  # `mlpgen show ... | head`: the reader left, nothing is wrong
        sys.stderr = open(os.devnull, "w")  # silence the failed flush at exit
        return 0
    except Exception as e:
        if not is_spec_error(e):
            raise
        print(one_line(f"mlpgen: error: {e}"), file=sys.stderr)
        return 2
    finally:
        if handler:
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
