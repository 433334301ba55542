"""`mlpgen ... --train`: search, per bucket, how a training step runs its backward.

The candidates of a bucket are the torch backward (training.TorchBackward: eager's own ops
under autograd, nn.Sequential's step) and the points of training.DOMAIN that fit
the bucket (TrainConfig: the training kernels' forward and backward). Each is verified and timed
on the step `mlpgen bench --train` times (train_bench: the module's FusedMLP in training mode,
the loss and torch.autograd.grad in x and every parameter): its output and gradients against the
fp32 step (train_bench.check_step), at the bucket's M and at an M that is not a multiple of the
candidate's row tile, then timed by measure.timed (timing.time_call, the forward search's one
timing method), scored by Measurement.score like the forward's candidates.

The search is the forward's, on a smaller scale (mlpgen.tune: its Objective and Encoding, its
sampler, its budget rule, its re-measurement and pick_never_slower): the torch backward, training's
default_for and this GPU's previous train winner are measured first, TPE proposes the rest; a
repeated proposal gets its recorded score back; the best few and the torch backward are measured
again and a kernel config wins only where it beats the torch backward beyond the noise. The
winner goes into the bucket's TUNED cell as cell["train"] (with its times, the torch backward's
and, where another candidate took much less GPU time, that one as the step a CUDA-graph capture
runs), which the module's training path (mlpgen.runtime.train) reads. Buckets are served
round-robin, so `--timeout` (a second one, after the forward search's) leaves each with its
firsts measured. One GPU measures; the studies live in memory, so a train search is not resumed.
As in the forward search, kernels compile in a pool of processes ahead of the measuring worker:
every bucket's firsts at the start, then each bucket's next proposal, asked a turn ahead
(TrainMeasure).
"""

from __future__ import annotations

import datetime
import functools
import itertools
import os
import random
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import optuna
from optuna.trial import TrialState

from mlpgen.decide import BucketResult, Measure, pick_graph_winner, recheck
from mlpgen.emit import read_module, write_module
from mlpgen.layout import MIN_DOT, next_pow2
from mlpgen.measure import (
    HOST_BUCKET_MAX,
    ODD_OFFSET,
    Measurement,
    WorkerPoisoned,
    cuda_healthy,
    describe,
    gave_up,
    timed,
)
from mlpgen.spec import MLPSpec
from mlpgen.training import (
    DOMAIN,
    MAX_WORKSPACE,
    MIN_SPLIT_ROWS,
    LtBackward,
    TorchBackward,
    TrainChoice,
    TrainConfig,
    default_for,
    fused_fits,
    one_pass_fits,
    one_pass_for,
    split_k_fits,
    train_choice,
    train_layers,
)
from mlpgen.trial_log import write_train_log
from mlpgen.tune import (
    MAX_SKIPS,
    Encoding,
    Objective,
    Progress,
    TuneOptions,
    budget,
    log,
    make_sampler,
    tune_module,
)
from mlpgen.workers import Compiler, WorkerMeasure

TORCH_BACKWARD = TorchBackward()
LT_BACKWARD = LtBackward()
# A bucket's default budget: a quarter of its candidates within these (the forward's is 12 to 48;
# `--trials` sets both): a train candidate's step launches several kernels, each compiled anew
# per config and per specialisation of M, so each costs more than a forward candidate.
TRAIN_BUDGET = (8, 24)


@dataclass(frozen=True)
class TrainSpace:
    """A bucket's train candidates, in tune.Objective's terms: the torch backward and, where
    `lt`, cuBLASLt's step (strategies of no fields), and the TrainConfig points of `fields`
    (strategy "kernels") that fit."""

    bucket: int
    fields: dict[str, tuple[int, ...]]
    candidates: tuple[TrainChoice, ...]
    dropped: tuple = ()
    lt: bool = False

    def __contains__(self, choice) -> bool:
        return choice in self._members

    @functools.cached_property
    def _members(self) -> frozenset:
        return frozenset(self.candidates)

    def domains(self) -> dict[str, dict[str, tuple[int, ...]]]:
        fieldless = (TorchBackward, LtBackward) if self.lt else (TorchBackward,)
        return {**{c.strategy: {} for c in fieldless}, TrainConfig.strategy: self.fields}


def train_space(spec: MLPSpec, bucket: int) -> TrainSpace:
    """DOMAIN's points for `bucket`: row tiles no taller than it needs, column tiles no wider
    than the widest layer needs, and splits of the weight gradient's rows of at least
    MIN_SPLIT_ROWS rows whose fp32 partials fit MAX_WORKSPACE (as default_for takes them);
    one_pass where its registers fit the config's warps; fused where fused_fits; split_k where
    split_k_fits the config at the bucket."""
    tall = max(MIN_DOT, next_pow2(bucket))
    wide = max(MIN_DOT, next_pow2(max(spec.widths)))
    params = sum(layer.n * (layer.k + 1) for layer in train_layers(spec))
    splits = max(1, min(bucket // MIN_SPLIT_ROWS, MAX_WORKSPACE // (4 * params)))
    fit = {"block_m": tall, "block_n": wide, "block_k": wide, "split": splits}
    fit["one_pass"] = int(any(one_pass_fits(spec, w) for w in DOMAIN["num_warps"]))
    fit["fused"] = int(fused_fits(spec))
    # the fewest output tiles (the largest) are the likeliest to split
    largest = TrainConfig(block_m=min(tall, 128), block_n=128, block_k=MIN_DOT, split_k=True)
    fit["split_k"] = int(split_k_fits(spec, bucket, largest))
    fields = {n: tuple(v for v in vs if v <= fit.get(n, v)) for n, vs in DOMAIN.items()}
    configs = (TrainConfig(**dict(zip(fields, p))) for p in itertools.product(*fields.values()))
    configs = (
        c
        for c in configs
        if (not c.one_pass or one_pass_fits(spec, c.num_warps, c.block_m, c.recompute))
        and (not c.split_k or split_k_fits(spec, bucket, c))
    )
    lt = lt_trains(spec)
    firsts = (TORCH_BACKWARD, LT_BACKWARD) if lt else (TORCH_BACKWARD,)
    return TrainSpace(bucket, fields, (*firsts, *configs), lt=lt)


def lt_trains(spec: MLPSpec) -> bool:
    """Whether cuBLASLt's step is a candidate: on a GPU, where cublaslt fits the spec."""
    import torch

    from mlpgen.runtime.cublaslt import fits

    return torch.cuda.is_available() and fits(spec) is None


def train_encoding(space: TrainSpace) -> Encoding:
    return Encoding(space.domains(), build=build_choice)


def build_choice(strategy: str, **fields) -> TrainChoice:
    fieldless = {c.strategy: c for c in (TORCH_BACKWARD, LT_BACKWARD)}
    return fieldless[strategy] if strategy in fieldless else TrainConfig(**fields)


# ---------------------------------------------------------------------------------------------
# Measuring one candidate (in a worker process: workers.WorkerMeasure with this as its fn)


_LOADED: dict[str, object] = {}


def tuned_module(path: str):
    """The module at `path`, imported once per process."""
    from mlpgen.selfcheck import load_module

    if path not in _LOADED:
        _LOADED[path] = load_module(Path(path))
    return _LOADED[path]


def serve(mod, choice: TrainChoice, key: str) -> None:
    """Make every cell of the module's table for GPU `key` train with `choice` (its forward
    cells kept: the torch backward's step runs them), as a tuned module would."""
    table = mod.TUNED.get(key) or mod.TUNED["default"]
    cells = {b: {**cell, "train": choice.to_dict()} for b, cell in table.items()}
    mod.TUNED = {**mod.TUNED, key: cells}
    mod._forget_dispatch()


def step_sizes(bucket: int, choice: TrainChoice) -> tuple[int, ...]:
    """The M a candidate's step is checked at: the bucket's and, where that is a multiple of
    the candidate's row tile, one that is not."""
    m = max(bucket, 1)
    tiled = isinstance(choice, TrainConfig) and m % choice.block_m == 0
    return (m, m + ODD_OFFSET) if tiled else (m,)


@dataclass(frozen=True)
class TrainCompile:
    """A kernel config's compile (workers.Compiler's unit of work): its kernels as the bucket's
    steps launch them. Triton specialises integer arguments equal to 1 or divisible by 16, so
    the same config compiles anew for another bucket's M."""

    choice: TrainConfig
    bucket: int
    has_kernel: ClassVar[bool] = True


def warm_size(m: int, cfg: TrainConfig) -> int:
    """A row count that launches `cfg`'s kernels as m rows do (the same split of the weight
    gradient; no training kernel specialises on M) but costs the GPU little: at most split x
    block_m rows. Under split_k, m itself: which layers split depends on M (it is small
    wherever split_k is a candidate)."""
    return m if cfg.split_k else min(m, cfg.split * cfg.block_m)


def warm_train_candidate(spec: MLPSpec, job: TrainCompile, path: str) -> None:
    """Compile job.choice's kernels by running its training step once at each M its bucket is
    checked at (warm_size), filling Triton's on-disk cache that the measuring worker reads."""
    import torch

    from mlpgen.bench import BY_NAME
    from mlpgen.train_bench import TrainModels
    from mlpgen.verify import random_problem

    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    try:
        mod = tuned_module(path)
        serve(mod, job.choice, mod.gpu_key() if cuda else "default")
        _, weights, biases = random_problem(spec, 1, device, seed=0)
        models = TrainModels(spec, mod, weights, biases)
        for m in step_sizes(job.bucket, job.choice):
            x = random_problem(spec, warm_size(m, job.choice), device, seed=1)[0]
            models.prepare(BY_NAME["mlpgen"], x, sync).output()
        sync()
    except Exception as e:
        if cuda and not cuda_healthy():
            raise WorkerPoisoned(describe(e)) from e
        raise


@dataclass
class TrainMeasure:
    """`measure(bucket, choice)` for the train search on a GPU: `inner` (a WorkerMeasure of
    measure_train_candidate) times a candidate once `compiler` (a pool of warm_train_candidate
    processes) has compiled its kernels; `prefetch` queues the candidates measured next."""

    inner: WorkerMeasure
    compiler: Compiler

    @property
    def quick(self) -> bool:
        return self.inner.quick

    @quick.setter
    def quick(self, value: bool) -> None:
        self.inner.quick = value

    def prefetch(self, bucket: int, choices) -> None:
        jobs = [TrainCompile(c, bucket) for c in choices if isinstance(c, TrainConfig)]
        self.compiler.prefetch(jobs)

    def __call__(self, bucket: int, choice: TrainChoice) -> Measurement:
        if isinstance(choice, TrainConfig):
            error = self.compiler.wait(TrainCompile(choice, bucket))
            if error is not None:
                return Measurement("error", f"compile: {error}")
        return self.inner(bucket, choice)

    def stop_compiling(self) -> None:
        """No more compiles beside the re-measurements (their candidates are compiled)."""
        self.compiler.close()

    def close(self) -> None:
        self.inner.close()
        self.compiler.close()


def measure_train_candidate(
    spec: MLPSpec,
    bucket: int,
    choice: TrainChoice,
    path: str,
    seed: int = 0,
    quick=False,
    give_up_us: float | None = None,
) -> Measurement:
    """Verify the module at `path` training with `choice` at `bucket` and, if right, time its
    step (`quick`: on measure.QUICK's budget; give_up_us: see measure.GIVE_UP). On a CPU (the
    interpreter) the GPU time is the host time and the table is "default" (the one the module
    reads there)."""
    import torch

    from mlpgen.bench import BY_NAME
    from mlpgen.train_bench import TrainModels
    from mlpgen.verify import random_problem

    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    try:
        mod = tuned_module(path)
        serve(mod, choice, mod.gpu_key() if cuda else "default")
        base = seed * 7919 + bucket * 31
        _, weights, biases = random_problem(spec, 1, device, seed=base)
        models = TrainModels(spec, mod, weights, biases)
        worst = 0.0
        for i, m in enumerate(reversed(step_sizes(bucket, choice))):  # the bucket's M last
            x = random_problem(spec, m, device, seed=base + 1 + i)[0]
            prepared = models.prepare(BY_NAME["mlpgen"], x, sync)
            result = models.verdict(prepared.output(), models.expected(x))
            if not result.ok:
                return Measurement("wrong", f"{result.reason} at M={m}", err=result.err)
            worst = max(worst, result.err)
        host = bucket <= HOST_BUCKET_MAX
        us, host_us, spread, rough = timed(prepared.call, cuda, host, quick, give_up_us)
        reason = gave_up(give_up_us) if rough else ""
        return Measurement("ok", reason, us=us, host_us=host_us, err=worst, spread=spread)
    except Exception as e:
        if cuda and not cuda_healthy():  # e.g. an illegal address: the worker is replaced
            raise WorkerPoisoned(describe(e)) from e
        return Measurement("error", describe(e))


# ---------------------------------------------------------------------------------------------
# The search


@dataclass
class TrainBucket:
    """One bucket's search: its space, budget, study and what it measured (config -> Known)."""

    space: TrainSpace
    target: int
    study: optuna.Study
    objective: Objective
    ahead: optuna.Trial | None = None  # asked, its config compiling, measured on its next turn

    @property
    def known(self) -> dict:
        return self.objective.known

    def done(self) -> bool:
        return len(self.known) >= self.target or len(self.known) >= len(self.space.candidates)


def firsts(spec: MLPSpec, bucket: int, previous: dict) -> list[TrainChoice]:
    """Measured first: the torch backward, cuBLASLt's step where it is a candidate (lt_trains),
    default_for, its split_k form where that fits (split_k_fits), its one_pass forms where the
    spec fits them, and this GPU's earlier train winner of the bucket."""
    default = default_for(spec, bucket)
    out = [TORCH_BACKWARD, *[LT_BACKWARD] * lt_trains(spec), default]
    split = replace(default, split_k=True)
    out += [split] * split_k_fits(spec, bucket, split) + one_pass_for(spec, bucket)
    if "train" in previous.get(bucket, {}):
        out.append(train_choice(previous[bucket]["train"]))
    return list(dict.fromkeys(out))


def plan_train(
    spec: MLPSpec, measure: Measure, opts: TuneOptions, previous: dict
) -> list[TrainBucket]:
    out = []
    for i, b in enumerate(opts.buckets):
        space = train_space(spec, b)
        n = len(space.candidates)
        target = (
            n if opts.exhaustive else min(n, budget(n, replace(opts, budget_range=TRAIN_BUDGET)))
        )
        study = optuna.create_study(
            sampler=make_sampler(opts.seed + i, target, opts.sampler), direction="minimize"
        )
        objective = Objective(space, measure, {}, encoding=train_encoding(space))
        order = firsts(spec, b, previous)
        if target == n:  # brute force: every candidate
            order += [c for c in space.candidates if c not in order]
        for c in order:
            if c in space:
                study.enqueue_trial(objective.encoding.params(c))
        if hasattr(measure, "prefetch"):  # every bucket's firsts compile before any is timed
            measure.prefetch(b, [c for c in order if c in space])
        out.append(TrainBucket(space, target, study, objective))
    return out


def step(tb: TrainBucket, rng: random.Random, progress: Progress) -> None:
    """Measure one more candidate of the bucket: the trial asked ahead, else ask the sampler (a
    repeat or an infeasible proposal is answered at once, up to MAX_SKIPS), else enqueue a
    random untried one. Then, where the measure compiles (TrainMeasure), ask the next trial
    ahead."""
    for _ in range(MAX_SKIPS):
        trial, tb.ahead = tb.ahead or tb.study.ask(), None
        answer(tb, trial)
        m = tb.objective.measured
        if m is not None:
            progress.update(tb.space.bucket, True, m.score, tb.target)
            break
    else:
        enqueue_untried(tb, rng)
    prefetch = getattr(tb.objective.measure, "prefetch", None)
    if prefetch is not None and not tb.done():
        ask_ahead(tb, prefetch, rng)


def enqueue_untried(tb: TrainBucket, rng: random.Random) -> TrainChoice:
    """Enqueue a random candidate the bucket has not measured (the sampler's proposals were
    all repeats or infeasible)."""
    choice = rng.choice([c for c in tb.space.candidates if c not in tb.known])
    tb.study.enqueue_trial(tb.objective.encoding.params(choice))
    return choice


def answer(tb: TrainBucket, trial: optuna.Trial) -> None:
    """Tell the study the trial's score: measured, recorded (a repeat) or pruned."""
    try:
        tb.study.tell(trial, tb.objective(trial))
    except optuna.TrialPruned:
        tb.study.tell(trial, state=TrialState.PRUNED)


def ask_ahead(tb: TrainBucket, prefetch, rng: random.Random) -> None:
    """Ask the bucket's next trial that needs measuring (repeats and infeasible proposals are
    answered at once, up to MAX_SKIPS; then a random untried one) and hand its config to the
    compiler, which compiles it while the other buckets measure; it is measured on the
    bucket's next turn."""
    for _ in range(MAX_SKIPS):
        trial = tb.study.ask()
        choice = tb.objective.encoding.suggest(trial)
        if choice in tb.space and choice not in tb.known:
            break
        answer(tb, trial)
    else:
        choice, trial = enqueue_untried(tb, rng), tb.study.ask()
    tb.ahead = trial
    prefetch(tb.space.bucket, [choice])


def search_train(
    spec: MLPSpec,
    measure: Measure,
    opts: TuneOptions,
    previous: dict | None = None,
    quiet: bool = False,
) -> dict[int, BucketResult]:
    """Search every bucket of opts.buckets, round-robin, then decide each: its best few and the
    torch backward re-measured (decide.recheck: medians, never slower than the torch backward)."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    buckets = plan_train(spec, measure, opts, previous or {})
    progress = Progress(sum(tb.target for tb in buckets), quiet=quiet)
    deadline = None if opts.timeout is None else time.monotonic() + opts.timeout
    rng = random.Random(opts.seed)
    active = list(buckets)
    while active:
        for tb in list(active):
            if tb.done() or (deadline is not None and time.monotonic() >= deadline):
                active.remove(tb)
                progress.finished(tb.space.bucket, tb.target)
                continue
            step(tb, rng, progress)
    progress.close()
    if hasattr(measure, "stop_compiling"):
        measure.stop_compiling()
    if getattr(measure, "quick", False):  # what decides is timed on measure.DECIDE
        measure.quick = False
    results = {}
    for tb in buckets:
        pairs = [(c, k.measurement) for c, k in tb.known.items()]
        r = BucketResult(tb.space.bucket, None, None, None, None, [], len(pairs), pairs)
        recheck(r, measure, opts.recheck)
        results[tb.space.bucket] = r
    return results


def train_cell(result: BucketResult) -> dict | None:
    """The TUNED cell's "train" value: the winner, its step's times and the torch backward's;
    and under "graph", where the winner keeps the GPU busier than another candidate by more
    than GRAPH_TIE, the candidate of least GPU time, which a CUDA-graph capture runs (a replay
    has no host time to save). cuBLASLt's step is not one: its workspace is made outside a
    capture."""
    if result.winner is None:
        return None
    choice, m = result.winner
    cell = choice.to_dict() | {k: round(v, 3) for k, v in m.times().items()}
    if result.eager is not None and choice != TORCH_BACKWARD:
        cell |= {k: round(v, 3) for k, v in result.eager.times("torch_").items()}
    graph = pick_graph_winner([cm for cm in result.pairs if cm[0] != LT_BACKWARD], result.winner)
    if graph is not None:
        cell["graph"] = graph[0].to_dict() | {"us": round(graph[1].us, 3)}
    return cell


def tune_train(path: Path, key: str, opts: TuneOptions, measure: Measure, quiet=False) -> dict:
    """Search the train candidates of the module at `path` on GPU `key` and write each bucket's
    winner into its TUNED cell (the buckets of opts.buckets that this GPU's table holds: the
    others have no forward cell). `measure` trains the module, whose kernel configs
    mlpgen.runtime.train launches. Returns the summary: per bucket the cell's train value, the
    re-measurements and the rejected candidates."""
    t0 = time.perf_counter()
    spec, tuned, prov = read_module(path)
    table = tuned.get(key, {})
    opts = replace(opts, buckets=tuple(b for b in opts.buckets if b in table))
    update = {}
    try:
        results = search_train(spec, measure, opts, table, quiet)
        cells = {b: train_cell(r) for b, r in results.items()}
        update = {b: {**table[b], "train": c} for b, c in cells.items() if c}
    finally:
        seconds = round(time.perf_counter() - t0, 1)
        # the train search's own date: it may run long after the forward's (retune --train-only)
        date = datetime.datetime.now().isoformat(timespec="seconds")
        done = {"train": {"trials": opts.trials, "seconds": seconds, "date": date}}
        if update:
            merged = prov.get(key, {}) | done
            write_module(path, spec, key, update, merged, opts.buckets, merge=True)
            write_train_log(path, spec, key, done["train"], results)
    return {
        "seconds": seconds,
        "measured": sum(r.measured for r in results.values()),
        "buckets": {
            str(b): {
                "measured": r.measured,
                "train": cells[b],
                "recheck": r.recheck,
                "rejected": [
                    {"config": c.to_dict(), "verdict": m.verdict, "reason": m.reason}
                    for c, m in r.pairs
                    if not m.ok
                ],
            }
            for b, r in sorted(results.items())
        },
    }


def train_measure(spec: MLPSpec, path: Path, device: int, opts: TuneOptions) -> TrainMeasure:
    """The GPU's measure for tune_train: a worker process timing on the QUICK budget, each
    candidate's kernels compiled first in a pool of processes (one per CPU but one) as far
    ahead as the search asks."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    compiler = Compiler(
        spec, str(path), processes=max(1, (cpus or 2) - 1), device=device, fn=warm_train_candidate
    )
    inner = WorkerMeasure(
        spec,
        str(path),
        device,
        opts.candidate_timeout,
        opts.seed,
        fn=measure_train_candidate,
        quick=True,
    )
    return TrainMeasure(inner, compiler)


def tune_with_training(path: Path, opts: TuneOptions, quiet: bool = False) -> dict:
    """tune_module, then with opts.train (where it wrote the module) the train search on what it
    wrote, on the first GPU: its summary as the forward summary's "train"."""
    summary = tune_module(path, opts, quiet)
    if opts.train and summary["written"]:
        summary["train"] = tune_trains(path, summary["gpu"], opts, quiet)
    return summary


def tune_trains(path: Path, key: str, opts: TuneOptions, quiet: bool, device: int = 0) -> dict:
    """The train search on a module whose forward table for GPU `key` is written; the closing
    line says where the training kernels and cuBLASLt's step won."""
    spec = read_module(path)[0]
    if not quiet:
        lt = ", cuBLASLt's step" if lt_trains(spec) else ""
        log(f"mlpgen: searching each bucket's training step: the torch backward{lt} or kernels")
    measure = train_measure(spec, path, device, opts)
    try:
        summary = tune_train(path, key, opts, measure, quiet)
    finally:
        measure.close()
    cells = [b["train"] for b in summary["buckets"].values() if b["train"] is not None]
    won = Counter(c.get("backward", "kernels") for c in cells)
    log(
        f"mlpgen: searched the training step in {summary['seconds']:.0f}s ({summary['measured']} "
        f"candidates measured): training kernels at {won['kernels']}, cuBLASLt's step at "
        f"{won[LtBackward.strategy]} of {len(cells)} buckets"
    )
    return summary
