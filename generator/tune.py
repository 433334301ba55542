"""Search the launch configuration of every batch bucket with Optuna and write the winners.

One study per (spec, GPU key, bucket, search space): the buckets' optima differ and so do their
spaces (a row tile taller than the bucket is dropped), and a bucket's study is then small
enough to resume or to share between workers without any bookkeeping of ours. The study name
also carries a hash of the templates and of the candidate list, so timings made with another
kernel or another space are never mixed in.

- One score: `Measurement.score`, the time per call that a caller issuing calls back to back
  waits (the larger of GPU and host time) plus measure.HIDDEN_WEIGHT times the smaller, which
  overlap hides imperfectly: among host-bound configs GPU time still counts. It is what the
  sampler minimises and what picks the winner. After the search (mlpgen.decide) the best
  RECHECK_TOP candidates and the torch path are measured again, RECHECK_ROUNDS rounds
  interleaved, once the compiles are over (a host-bound call is slowed by compiling
  processes beside it); medians decide, and a kernel wins only where it beats the torch path
  by more than the noise (the spread of those samples, at least NOISE).
  Then neighbouring buckets whose winners differ are offered each other's winner, measured
  beside their own the same way (consolidate): one is taken where it ties and the module then
  carries fewer lines of kernels, helpers and launch code (render.module_lines).
- A bucket's budget is a quarter of its candidates, at least 12 and at most 48 (`budget`;
  `--trials` sets it). Brute force (every candidate enqueued) when the feasible space fits the
  budget, or with `exhaustive`. Either way the heuristic default, this GPU's previous winners
  and the torch path are measured first: no seed is fitted to a GPU's measurements.
- Otherwise each step enqueues the most promising untried candidate it can name -- the best
  config of a neighbouring bucket, then one config drawn at random from each launch kind not
  yet measured in the bucket (a kind of few configs, such as stream's TMA tiles, is otherwise
  easily never proposed), then (for a bucket's first LOCAL_STEPS measurements) a neighbour of
  this bucket's best, one field one step away -- and leaves the rest to a seeded TPE sampler
  over ordinal parameters. Small budgets profit from the local steps (tile-size
  landscapes are smooth near the default), larger ones from TPE's global view. A budget's last
  POLISH_SHARE (at least POLISH_STEPS) measurements climb: untried neighbours of the best
  config of each launch kind (a strategy; stream's TMA tiles apart, a kernel and launch of
  their own) within POLISH_BAND of the best score, in turn, so that the search ends on a
  local optimum, and not only on the leading kind's.
- Bucket order matters: the buckets are searched together in ascending order, round-robin,
  and each step first measures the best config so far of the neighbouring buckets of the same
  search (below and above); with one bucket alone (or far-apart buckets) that seed is weaker.
- A failed, hung or wrong candidate is a pruned trial with its verdict and reason in the
  trial's user attributes; it never aborts the study and is never selected. A config proposed
  again gets its recorded score back (a completed trial), so the sampler learns it again
  rather than marking the incumbent's neighbourhood bad.
- Buckets are served round-robin, one measurement at a time, so `--timeout` leaves every
  bucket with its defaults measured rather than some fully searched and others untouched. A
  bucket whose next kernel is still compiling is passed over, for at most HOLD_S seconds,
  while others have theirs compiled (Driver.turn): the GPU does not wait for a compile that
  other measurements can cover.
- Several workers (one per GPU) are threads of this process, each driving its own measuring
  process on its own GPU (two driver threads a GPU, taking turns on its measuring process, so
  that one's sampler work overlaps the other's measurement: workers.WorkerMeasure.drivers);
  they coordinate through the storage only (mlpgen.claims), exactly as several processes or
  hosts pointing at one `--storage` do: a config is measured by whoever holds its claim; the
  first process with nothing left to measure claims the decision, waits for the measurements
  in flight, decides every bucket and writes the module, once.
- Kernels are compiled only when the search is about to measure them (`measure.prefetch`, a
  pool of compiling processes ahead of the GPU): each bucket keeps `lookahead` trials asked
  ahead (TPE's constant liar fills in for their results), so that several compile at once;
  `bucket_timeout` caps a bucket's measuring. The search's measurements time on a quick budget
  (measure.QUICK), and a candidate whose one call is over GIVE_UP times its bucket's best so
  far only for that call (measure.GIVE_UP); what the winners rest on (re-measurement, kernel
  sharing) on a larger one (measure.DECIDE). A bucket's PDL variants are measured as soon as
  its search is done, between the other buckets' candidates, on the search's budget, as the
  configs they are compared with were.

The search takes `measure(bucket, config) -> Measurement` as an argument: tests drive it with a
synthetic landscape, `tune_module` with worker processes on the GPUs.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import math
import os
import random
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import optuna
from optuna.trial import TrialState

import mlpgen
from mlpgen import dispatch
from mlpgen.claims import CLAIM_TTL, Claims, claim_key, make_storage
from mlpgen.decide import (
    RECHECK_ROUNDS,
    BucketResult,
    Measure,
    consolidate,
    decide,
    pdl_pass,
    pdl_picks,
    pick_graph_winner,
    pick_winner,
)
from mlpgen.emit import DEFAULT_KEY, entry, graph_cell, read_module, with_graph_winner, write_module
from mlpgen.measure import Measurement, describe
from mlpgen.render import template_hash
from mlpgen.space import (
    DEFAULT_BUCKETS,
    MAX_SHARED,
    SearchSpace,
    heuristic_config,
    search_space,
)
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.trial_log import config_text, trial_log_path, write_trial_log
from mlpgen.workers import WorkerStartError

LOCAL_STEPS = 6  # a bucket's first measurements (firsts included) search the best one's neighbours
# A budget's last measurements (POLISH_SHARE of it, at least POLISH_STEPS) climb from the best
# configs so far, so that the search ends on a local optimum rather than beside one: from the
# best of each launch kind within POLISH_BAND of the best score, in turn (the landscape is smooth
# within a kind, not across kinds, so a runner-up kind's best may be a step away
# from the optimum while the leader's neighbourhood holds nothing better).
POLISH_STEPS = 4
POLISH_SHARE = 0.4
POLISH_BAND = 0.15


def polish_steps(target: int) -> int:
    return max(POLISH_STEPS, round(POLISH_SHARE * target))


LOOKAHEAD_TRIALS = 12
# A bucket whose next kernel is still compiling is passed over (Driver.turn) for at most this
# long while other buckets have theirs compiled: on a cold cache the large buckets' first
# kernels compile for seconds after the small buckets' are ready.
HOLD_S = 30.0
MAX_SKIPS = 20  # trials in a row that measure nothing before a random candidate is enqueued


@dataclass(frozen=True)
class TuneOptions:
    """The tuning budget and where the studies live (the CLI's tune options)."""

    buckets: tuple[int, ...] = DEFAULT_BUCKETS
    # candidates measured per bucket (the whole space when it is smaller); None: `budget`,
    # budget_share of the bucket's space within budget_range (its upper end None: no cap)
    trials: int | None = None
    budget_share: float = 0.25
    budget_range: tuple[int, int | None] = (12, 48)
    timeout: float | None = None  # seconds for the whole search
    storage: str | None = None  # database URL or journal file; default: journal beside module
    workers: int = 1  # one per visible GPU
    seed: int = 0
    exhaustive: bool = False  # measure every feasible candidate, ignoring `trials`
    candidate_timeout: float = 30.0  # seconds one candidate may take in its worker
    bucket_timeout: float | None = None  # seconds of measuring one bucket may take (per process)
    # trials of a bucket asked ahead of its measurements (Driver.ahead): their kernels compile
    # at once, in parallel; more are proposed on less knowledge
    lookahead: int = 3
    recheck: int = RECHECK_ROUNDS  # rounds of re-measuring the best few (0: decide on one each)
    share: bool = True  # neighbouring buckets ship one kernel where it ties (consolidate)
    # "tpe": local steps and TPE (the tuner); "random": uniform random proposals, no local
    # steps (the baseline of the ablation in mlpgen.trials)
    sampler: str = "tpe"
    train: bool = False  # then search each bucket's training backward too (mlpgen.train_tune)


# ---------------------------------------------------------------------------------------------
# Configs <-> Optuna parameters


@dataclass(frozen=True)
class Encoding:
    """Configs <-> trial parameters for one bucket's space. The strategy is categorical; every
    other searched field is the index of its value in the bucket's sorted domain, an ordered
    integer, so TPE learns that neighbouring tile sizes behave alike. Fields are named per
    strategy ("rowblock.block_m"), so strategies never clash over a field; a field with one
    value is not a parameter at all. `build(strategy=..., **fields)` makes a candidate of
    them (a KernelConfig; mlpgen.train_tune's candidates have a strategy and fields too)."""

    domains: dict[str, dict[str, tuple[int, ...]]]
    build: Callable[..., KernelConfig] = KernelConfig

    def params(self, config: KernelConfig) -> dict:
        p = {"strategy": config.strategy}
        for n, values in self.domains[config.strategy].items():
            if len(values) > 1:
                p[f"{config.strategy}.{n}"] = values.index(getattr(config, n))
        return p

    def config(self, params: dict) -> KernelConfig:
        s = params["strategy"]
        fields = {
            n: values[params[f"{s}.{n}"]] if len(values) > 1 else values[0]
            for n, values in self.domains[s].items()
        }
        return self.build(strategy=s, **fields)

    def neighbours(self, config: KernelConfig) -> list[KernelConfig]:
        """Configs of the same strategy one step away in one searched field."""
        p = self.params(config)
        out = []
        for name, i in p.items():
            if name == "strategy":
                continue
            size = len(self.domains[config.strategy][name.split(".", 1)[1]])
            for j in (i - 1, i + 1):
                if 0 <= j < size:
                    out.append(self.config({**p, name: j}))
        return out

    def suggest(self, trial: optuna.trial.BaseTrial) -> KernelConfig:
        s = trial.suggest_categorical("strategy", sorted(self.domains))
        fields = {}
        for n, values in self.domains[s].items():
            i = trial.suggest_int(f"{s}.{n}", 0, len(values) - 1) if len(values) > 1 else 0
            fields[n] = values[i]
        return self.build(strategy=s, **fields)


# ---------------------------------------------------------------------------------------------
# The objective


@dataclass
class Known:
    """A config already decided in this study: its trial number and measurement."""

    number: int
    measurement: Measurement


class Skip(Exception):
    """A trial the sampler must not learn from (another worker holds its config's claim): it
    ends as a FAILed trial, which TPE ignores."""


class Objective:
    """One trial: suggest a config, refuse it if it is outside the space, answer a repeat with
    its recorded score, or claim and measure it. Returns the score (µs) of a verified candidate;
    a failed or wrong one raises TrialPruned, and so does an infeasible suggestion; the reason
    is in the trial's user attributes. `claim(config)` says why another worker has the config
    (None: it is ours to measure, and `decided(config)` says whether it was measured meanwhile)."""

    def __init__(
        self,
        space: SearchSpace,
        measure: Measure,
        known: dict[KernelConfig, Known],
        claim: Callable[[KernelConfig], str | None] | None = None,
        decided: Callable[[KernelConfig], Known | None] | None = None,
        encoding: Encoding | None = None,
    ):
        self.space, self.measure, self.known = space, measure, known
        self.claim, self.decided = claim, decided
        self.encoding = Encoding(space.domains()) if encoding is None else encoding
        self.dropped = dict(space.dropped)
        self.measured: Measurement | None = None  # set when this call really measured
        self.config: KernelConfig | None = None

    def repeat(self, trial: optuna.trial.BaseTrial, prior: Known) -> float:
        """A decided config again: its recorded score, or pruned where it failed."""
        trial.set_user_attr("repeat_of", prior.number)
        m = prior.measurement
        if m.ok:
            return m.score
        raise optuna.TrialPruned(f"repeat of trial {prior.number}: {m.verdict}")

    def __call__(self, trial: optuna.trial.BaseTrial) -> float:
        self.measured = None
        config = self.config = self.encoding.suggest(trial)
        trial.set_user_attr("config", config.to_dict())
        if config not in self.space:
            reason = self.dropped.get(config, "outside the search space")
            trial.set_user_attr("skipped", f"infeasible: {reason}")
            raise optuna.TrialPruned(reason)
        prior = self.known.get(config)
        if prior is not None:
            return self.repeat(trial, prior)
        taken = None if self.claim is None else self.claim(config)
        if taken is not None:
            trial.set_user_attr("skipped", taken)
            raise Skip(taken)
        prior = None if self.decided is None else self.decided(config)
        if prior is not None:  # measured by another worker between our read and our claim
            return self.repeat(trial, prior)
        t0 = time.perf_counter()
        try:
            m = self.measure(self.space.bucket, config)
        except WorkerStartError:
            raise  # nothing can be measured at all: stop, this is no verdict on the candidate
        except Exception as e:  # a bug in a measure function costs this candidate only
            m = Measurement("error", describe(e))
        record = m.to_dict()
        record["seconds"] = round(time.perf_counter() - t0, 3)
        trial.set_user_attr("measurement", record)
        self.measured = m
        self.known[config] = Known(getattr(trial, "number", -1), m)
        if m.ok:
            return m.score
        raise optuna.TrialPruned(f"{m.verdict}: {m.reason}")


# ---------------------------------------------------------------------------------------------
# One bucket's study


def study_name(spec: MLPSpec, key: str, space: SearchSpace) -> str:
    h = hashlib.sha256(f"{template_hash()}|{space.candidates!r}".encode()).hexdigest()[:8]
    return f"{spec.name}|{key}|bucket{space.bucket}|{h}"


def measured_trials(study: optuna.Study) -> list[tuple[optuna.trial.FrozenTrial, Measurement]]:
    """Trials that really measured a candidate (not repeats, not skipped), in order."""
    out = []
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED)):
        record = t.user_attrs.get("measurement")
        if record is not None:
            out.append((t, Measurement.from_dict(record)))
    return out


def snapshot(
    study: optuna.Study, encoding: Encoding
) -> tuple[dict[KernelConfig, Known], set[KernelConfig]]:
    """The configs decided so far (with their trial and measurement) and those waiting in the
    queue, from one read of the storage."""
    known, waiting = {}, set()
    for t in study.get_trials(deepcopy=False):
        if t.state == TrialState.WAITING:
            try:
                waiting.add(encoding.config(t.system_attrs.get("fixed_params", t.params)))
            except (KeyError, ValueError, IndexError, TypeError):
                pass
        elif t.state in (TrialState.COMPLETE, TrialState.PRUNED):
            record = t.user_attrs.get("measurement")
            if record is not None:
                config = KernelConfig.from_dict(t.user_attrs["config"])
                known[config] = Known(t.number, Measurement.from_dict(record))
    return known, waiting


def enqueue(
    study: optuna.Study, encoding: Encoding, configs: Sequence[KernelConfig], skip=None
) -> int:
    """Enqueue the configs that are neither decided nor already waiting; returns how many."""
    if skip is None:
        known, waiting = snapshot(study, encoding)
        skip = set(known) | waiting
    skip = set(skip)
    n = 0
    for c in configs:
        if c not in skip:
            study.enqueue_trial(encoding.params(c))
            skip.add(c)
            n += 1
    return n


@dataclass
class Bucket:
    """A bucket's search: its space, its study's name, its budget and its first candidates."""

    spec: MLPSpec
    key: str
    space: SearchSpace
    target: int  # candidates to measure
    brute: bool  # every candidate enqueued; the sampler is never asked
    first: list[KernelConfig]  # default, previous winners, torch: measured first
    # previous winners that ran with PDL, as the space holds them (PDL off): pdl_pass tries PDL
    # on them whatever their rank without it
    linked: tuple[KernelConfig, ...] = ()
    sampler: str = "tpe"  # TuneOptions.sampler
    name: str = field(init=False)
    encoding: Encoding = field(init=False)

    def __post_init__(self) -> None:
        self.name = study_name(self.spec, self.key, self.space)
        self.encoding = Encoding(self.space.domains())

    @property
    def sampler_name(self) -> str:
        if self.brute:
            return "brute force"
        return "local+tpe" if self.sampler == "tpe" else self.sampler

    def order(self) -> list[KernelConfig]:
        """What to enqueue: the first candidates, then (brute force) the rest of the space."""
        rest = [c for c in self.space.candidates if c not in self.first] if self.brute else []
        return [c for c in self.first if c in self.space] + rest


def make_sampler(seed: int, target: int, kind: str = "tpe") -> optuna.samplers.BaseSampler:
    if kind == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.samplers.TPESampler(
            seed=seed,
            n_startup_trials=max(4, min(10, target // 4)),
            multivariate=True,
            group=True,
            constant_liar=True,
        )


def open_study(storage, bucket: Bucket, seed: int) -> optuna.Study:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.create_study(
            storage=storage,
            study_name=bucket.name,
            sampler=make_sampler(seed, bucket.target, bucket.sampler),
            direction="minimize",
            load_if_exists=True,
        )


# ---------------------------------------------------------------------------------------------
# The search


@dataclass(frozen=True)
class Job:
    """What to tune: a spec on one GPU (its key) over buckets, with the previous winners."""

    spec: MLPSpec
    key: str
    options: TuneOptions = TuneOptions()
    previous: dict = field(default_factory=dict)  # this GPU's TUNED table, {bucket: cell}
    max_shared: int = MAX_SHARED
    recorded: dict | None = None  # {bucket: configs}: search only these (a replayed log's)
    clusters: bool = False  # the GPU launches thread-block clusters (sm_90+)
    pdl: bool = False  # the GPU has programmatic dependent launch (sm_90+): pdl_pass runs
    others: tuple[KernelConfig, ...] = ()  # the configs of the module's other GPUs' tables
    trained: dict | None = None  # this GPU's train search provenance, kept with its steps


def previous_winners(previous: dict, bucket: int) -> list[KernelConfig]:
    """This GPU's earlier winners for the bucket (or for the nearest tuned bucket): the call
    winner and the CUDA-graph winner, PDL as they ran."""
    if not previous:
        return []
    b = min(previous, key=lambda p: (abs(math.log(p) - math.log(bucket)), p))
    out = []
    for cell in (previous[b], graph_cell(previous[b])):
        if cell is None:  # no CUDA-graph winner of its own
            continue
        try:
            out.append(KernelConfig.from_dict(cell))
        except (KeyError, TypeError, ValueError):
            pass
    return out


def budget(space: int, options: TuneOptions) -> int:
    """Candidates to measure in a space of `space` configs: `options.trials` where given, else
    the default budget: a quarter of the space (the share the search is judged at, in
    mlpgen.trials), at least 12 (a small space is then mostly or wholly measured) and at most
    48 (the largest spaces, several hundred configs, have their optimum in a few smooth
    neighbourhoods that the local steps reach without a quarter of them)."""
    if options.trials is not None:
        return options.trials
    least, most = options.budget_range
    want = max(least, int(options.budget_share * space))
    return want if most is None else min(most, want)


def plan(job: Job) -> list[Bucket]:
    """Each bucket's space, budget and first candidates: the heuristic default, this GPU's
    previous winners (call and CUDA graph) and the torch path. Nothing else is seeded: the
    search must find the rest itself, on any GPU."""
    out = []
    for b in job.options.buckets:
        space = search_space(job.spec, b, job.max_shared, job.clusters)
        if job.recorded is not None:
            space = space.within(job.recorded.get(b, ()))
        n = len(space.candidates)
        want = budget(n, job.options)
        brute = job.options.exhaustive or n <= want
        previous = previous_winners(job.previous, b)
        unlinked = [replace(c, pdl=False) for c in previous]  # as the space holds them: PDL off
        first = (
            heuristic_config(job.spec, b),
            *unlinked,
            KernelConfig(strategy="torch"),
        )
        first = list(dict.fromkeys(c for c in first if c is not None and c in space))
        linked = tuple(u for c, u in zip(previous, unlinked) if c.pdl and u in space)
        target = n if brute else want
        out.append(
            Bucket(job.spec, job.key, space, target, brute, first, linked, job.options.sampler)
        )
    return out


class Progress:
    """Progress on stderr: on a terminal one self-rewriting line (bucket, its trials done of its
    budget, its best score so far); everywhere, one line per bucket once it is done."""

    def __init__(self, total: int, stream=None, enabled: bool | None = None, quiet: bool = False):
        self.stream = sys.stderr if stream is None else stream
        self.live = (self.stream.isatty() if enabled is None else enabled) and not quiet
        self.quiet = quiet
        self.total, self.done, self.t0 = total, 0, time.perf_counter()
        self.lock = threading.Lock()
        self.best: dict[int, float] = {}
        self.count: dict[int, int] = {}
        self.closed: set[int] = set()

    def update(
        self, bucket: int, measured: bool, score: float | None, target: int | None = None
    ) -> None:
        with self.lock:
            self.done += measured
            self.count[bucket] = self.count.get(bucket, 0) + measured
            if score is not None and score < self.best.get(bucket, math.inf):
                self.best[bucket] = score
            if not self.live:
                return
            of = f"/{target}" if target else ""
            best = self.best.get(bucket)
            best_txt = f"best {best:8.2f} us" if best is not None else ""
            self.stream.write(
                f"\r  bucket {bucket:>6}: {self.count[bucket]}{of} trials {best_txt}  "
                f"[{self.done}/{self.total}] {time.perf_counter() - self.t0:5.0f}s\x1b[K"
            )
            self.stream.flush()

    def finished(self, bucket: int, target: int, best: str | None = None) -> None:
        """One line for a bucket whose search is done (here), once."""
        with self.lock:
            if self.quiet or bucket in self.closed:
                return
            self.closed.add(bucket)
            n = self.count.get(bucket, 0)
            score = self.best.get(bucket)
            text = "nothing verified" if score is None else f"best {score:.2f} us"
            if best:
                text += f" ({best})"
            self.stream.write(
                f"\r  bucket {bucket:>6}: {n}/{target} trials, {text}\x1b[K\n"
                if self.live
                else f"  bucket {bucket:>6}: {n}/{target} trials, {text}\n"
            )
            self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write("\n")
            self.stream.flush()


@dataclass
class Shared:
    """What the workers of one search share: the storage, the claims in it, the progress."""

    storage: object
    seed: int
    progress: Progress
    claims: Claims
    bucket_timeout: float | None = None
    lookahead: int = 1  # trials asked ahead per bucket (TuneOptions.lookahead)
    lock: threading.Lock = field(default_factory=threading.Lock)


@functools.cache
def kind_of(config: KernelConfig) -> str:
    """dispatch.launch_kind of a config, cached: a search step asks it of every candidate left."""
    return dispatch.launch_kind(config.to_dict())


class Driver:
    """One worker: serves every bucket round-robin, one trial at a time, with one measure."""

    def __init__(
        self,
        index: int,
        buckets: list[Bucket],
        measure: Measure,
        shared: Shared,
        on_done: Callable[[Bucket, optuna.Study], None] | None = None,
    ):
        self.index, self.buckets, self.measure, self.shared = index, buckets, measure, shared
        self.on_done = on_done  # called with a bucket (and its study) whose search is done
        self.studies = {
            b.name: open_study(shared.storage, b, shared.seed * 1009 + i * 31 + index)
            for i, b in enumerate(buckets)
        }
        self.rng = random.Random(shared.seed * 7 + index)
        self.turns: dict[str, int] = {}  # study name -> polish steps taken (polish's turn)
        self.best: dict[str, tuple[float, KernelConfig]] = {}  # study name -> best so far
        self.spent: dict[str, float] = {}  # study name -> seconds this driver measured it
        # study name -> trials asked ahead, oldest first (at most shared.lookahead)
        self.pending: dict[str, list[optuna.trial.Trial]] = {}
        # a trial asked ahead -> its config (suggesting it again reads the storage each time)
        self.proposed: dict[optuna.trial.Trial, KernelConfig] = {}
        for b in buckets:
            known, _ = snapshot(self.studies[b.name], b.encoding)
            for config, k in known.items():
                self.note(b, config, k.measurement)

    def note(self, bucket: Bucket, config: KernelConfig, m: Measurement) -> None:
        if m.ok and m.score < self.best.get(bucket.name, (math.inf,))[0]:
            self.best[bucket.name] = (m.score, config)

    def neighbours_best(self, bucket: Bucket) -> list[KernelConfig]:
        """The best configs so far of the buckets next to this one: large buckets tend to
        share their optimum, so a neighbour's winner is the most promising guess there is."""
        i = self.buckets.index(bucket)
        near = self.buckets[max(0, i - 1) : i] + self.buckets[i + 1 : i + 2]
        return [self.best[b.name][1] for b in near if b.name in self.best]

    def guess(self, bucket: Bucket, known, busy) -> KernelConfig | None:
        """What to measure next before asking the sampler: a neighbouring bucket's best, a
        random config of a launch kind not yet measured here, an untried neighbour of this
        bucket's best (one field one step away in its domain) in its first LOCAL_STEPS
        measurements, or of its winner (polish) in the budget's last POLISH_STEPS; None lets
        TPE propose (in between, and once those neighbourhoods are exhausted; always with the
        random sampler)."""
        if bucket.sampler == "random":
            return None
        left = set(self.remaining(bucket, known, busy))
        for c in self.neighbours_best(bucket):
            if c in left:
                return c
        measured = sum(1 for c in known if c in bucket.space)
        if left and measured >= bucket.target - polish_steps(bucket.target):
            return self.polish(bucket, known, left)
        best = self.best.get(bucket.name)
        if left and best is not None and measured < LOCAL_STEPS:
            near = [c for c in bucket.encoding.neighbours(best[1]) if c in left]
            if near:
                return self.rng.choice(near)
        kinds = {kind_of(c) for c in known if c in bucket.space}
        untried = sorted({kind_of(c) for c in left} - kinds)
        if untried:  # one config of each launch kind not yet measured here, drawn at random
            return self.rng.choice(sorted((c for c in left if kind_of(c) == untried[0]), key=str))
        return None

    def polish(self, bucket: Bucket, known, left: set) -> KernelConfig | None:
        """An untried neighbour of one of the bucket's local optima so far: the best config
        of each launch kind (dispatch.launch_kind) within POLISH_BAND of the best score, taken
        in turn (the best first), so that a kind whose best so far is a step away from the
        optimum is climbed too; each step re-centres on the best. None once their
        neighbourhoods are measured."""
        pairs = [(c, k.measurement) for c, k in known.items() if c in bucket.space]
        ok = sorted((p for p in pairs if p[1].ok), key=lambda p: (p[1].score, p[1].us))
        if not ok:
            return None
        tops = {}
        for c, m in ok:
            if m.score <= ok[0][1].score * (1 + POLISH_BAND):
                tops.setdefault(kind_of(c), c)
        centres = list(tops.values())
        turn = self.turns.get(bucket.name, 0)
        self.turns[bucket.name] = turn + 1
        for i in range(len(centres)):
            centre = centres[(turn + i) % len(centres)]
            near = [c for c in bucket.encoding.neighbours(centre) if c in left]
            if near:
                return self.rng.choice(near)
        return None

    def remaining(self, bucket: Bucket, known, busy) -> list[KernelConfig]:
        return [c for c in bucket.space.candidates if c not in known and c not in busy]

    def finished(self, bucket: Bucket, known, busy) -> bool:
        """Its budget is measured or being measured, nothing is left, or its time is up."""
        measured = sum(1 for c in known if c in bucket.space)
        cap = self.shared.bucket_timeout
        if cap is not None and self.spent.get(bucket.name, 0.0) >= cap:
            return True
        return measured + len(busy) >= bucket.target or not self.remaining(bucket, known, busy)

    def prefetch(self, configs: Sequence[KernelConfig]) -> None:
        """Tell the measure what comes next (a measure that compiles starts on it)."""
        ahead = getattr(self.measure, "prefetch", None)
        if ahead is not None:
            ahead([c for c in configs if c.has_kernel])

    def asked(self, bucket: Bucket) -> set[KernelConfig]:
        """The configs of the bucket's trials asked ahead."""
        return {self.proposed[t] for t in self.pending.get(bucket.name, ())}

    def ahead(self, bucket: Bucket) -> None:
        """Ask the bucket's next trials now, right after its last measurement, up to
        `lookahead` of them, and hand their configs to the compiler: they are measured when
        the bucket's turns come round again, by which time their kernels are compiled (with
        one trial ahead a bucket's every measurement would wait for one compile; with several
        the compiling processes work on several at once). The sampler proposes them without
        their results (TPE's constant liar), the local steps from the best measured so far.
        Proposals that measure nothing (repeats, infeasible configs, a config already asked)
        are answered at once, up to MAX_SKIPS."""
        study = self.studies[bucket.name]
        queue = self.pending.setdefault(bucket.name, [])
        # a trial asked k ahead is proposed without k - 1 results: a budget affords that in
        # proportion to its size (one ahead per LOOKAHEAD_TRIALS of it)
        depth = max(1, min(self.shared.lookahead, bucket.target // LOOKAHEAD_TRIALS))
        for _ in range(MAX_SKIPS):
            if len(queue) >= depth:
                return
            known, waiting = snapshot(study, bucket.encoding)
            asked = self.asked(bucket)
            busy = self.shared.claims.busy(bucket.name) | asked
            if self.finished(bucket, known, busy):
                return
            if not waiting:
                if bucket.brute:  # what is left was lost with a dead process: enqueue it again
                    left = self.remaining(bucket, known, busy)[:1]
                    enqueue(study, bucket.encoding, left, set(known))
                elif (guess := self.guess(bucket, known, busy)) is not None:
                    enqueue(study, bucket.encoding, [guess], set(known))
            with self.shared.lock:  # one ask at a time in this process (SQLite locks coarsely)
                trial = study.ask()
            config = bucket.encoding.suggest(trial)  # kept by the trial: the objective's too
            if config in asked:  # measured by an earlier trial asked ahead: nothing to learn
                study.tell(trial, state=TrialState.FAIL)
            elif config in bucket.space and config not in known:
                self.prefetch([config])
                self.proposed[trial] = config
                queue.append(trial)
            else:
                self.trial(bucket, study, known, trial)  # a repeat or infeasible: no measuring

    def drop_pending(self) -> None:
        """Trials asked ahead and never measured end as FAILed (the sampler ignores them)."""
        for name, trials in self.pending.items():
            for trial in trials:
                self.studies[name].tell(trial, state=TrialState.FAIL)
        self.pending.clear()
        self.proposed.clear()

    def step(self, bucket: Bucket) -> bool:
        """Measure one more candidate of this bucket; False once it needs nothing more."""
        study = self.studies[bucket.name]
        claims = self.shared.claims
        queue = self.pending.get(bucket.name, [])
        ahead = queue.pop(0) if queue else None
        known, waiting = snapshot(study, bucket.encoding)
        busy = claims.busy(bucket.name) | self.asked(bucket)
        done = self.finished(bucket, known, busy)  # then nothing more is compiled for it
        if ahead is None and not bucket.brute and not waiting and not done:
            guess = self.guess(bucket, known, busy)
            if guess is not None:
                enqueue(study, bucket.encoding, [guess], set(known))
                self.prefetch([guess])
        for _ in range(MAX_SKIPS):
            known, waiting = snapshot(study, bucket.encoding)
            busy = claims.busy(bucket.name)
            if self.finished(bucket, known, busy):
                if ahead is not None:
                    study.tell(ahead, state=TrialState.FAIL)
                return False
            if ahead is None and not waiting and bucket.brute:
                # everything was enqueued, so what is left is running elsewhere or was lost
                # with a dead process: enqueue it again (a repeat costs nothing)
                left = self.remaining(bucket, known, busy)[:1]
                enqueue(study, bucket.encoding, left, set(known))
            m = self.trial(bucket, study, known, ahead)
            ahead = queue.pop(0) if queue else None  # a trial asked ahead before a fresh one
            if m is not None:
                if ahead is not None:
                    queue.insert(0, ahead)
                self.ahead(bucket)
                return True
        # the sampler keeps proposing decided or infeasible configs: measure a random one of
        # those left, so every step makes progress
        known, waiting = snapshot(study, bucket.encoding)
        left = [c for c in self.remaining(bucket, known, busy) if c not in waiting]
        if left:
            pick = self.rng.choice(left)
            enqueue(study, bucket.encoding, [pick], set(known) | waiting)
            self.prefetch([pick])
        return True

    def trial(self, bucket: Bucket, study: optuna.Study, known, trial=None) -> Measurement | None:
        """One Optuna trial (`trial`: one asked ahead); the measurement if it measured one."""
        claims = self.shared.claims
        held = []

        def claim(config: KernelConfig) -> str | None:
            tid = claims.take(
                claim_key(bucket.name, config), study=bucket.name, config=config.to_dict()
            )
            if tid is None:
                return "being measured by another worker"
            held.append(tid)
            return None

        def decided(config: KernelConfig) -> Known | None:
            return snapshot(study, bucket.encoding)[0].get(config)

        objective = Objective(bucket.space, self.measure, known, claim, decided, bucket.encoding)
        if trial is None:
            with self.shared.lock:  # one ask at a time in this process (SQLite locks coarsely)
                trial = study.ask()
        t0 = time.monotonic()
        try:
            study.tell(trial, objective(trial))
        except optuna.TrialPruned:
            study.tell(trial, state=TrialState.PRUNED)
        except Skip:
            study.tell(trial, state=TrialState.FAIL)
        except BaseException:
            study.tell(trial, state=TrialState.FAIL)
            raise
        finally:  # released once the trial is finished in the storage
            for tid in held:
                claims.release(tid)
        m = objective.measured
        if m is not None:
            self.spent[bucket.name] = self.spent.get(bucket.name, 0.0) + time.monotonic() - t0
            self.note(bucket, objective.config, m)
            self.shared.progress.update(bucket.space.bucket, True, m.score, bucket.target)
        return m

    def next_config(self, bucket: Bucket) -> KernelConfig | None:
        """The config the bucket's next step measures, where it is known: its oldest trial
        asked ahead, else the first trial waiting in its queue (its firsts, a guess)."""
        queue = self.pending.get(bucket.name)
        if queue:
            return self.proposed[queue[0]]
        study = self.studies[bucket.name]
        waiting = study.get_trials(deepcopy=False, states=(TrialState.WAITING,))
        if not waiting:
            return None
        t = min(waiting, key=lambda t: t.number)
        try:
            return bucket.encoding.config(t.system_attrs.get("fixed_params", t.params))
        except (KeyError, ValueError, IndexError, TypeError):
            return None

    def turn(self, active: list[Bucket], held: dict[str, float]) -> list[Bucket]:
        """The buckets to step this round, in order: those whose next kernel is compiled
        (`measure.ready`), or where none is, the first one (its step waits for the compile).
        A bucket is passed over for at most HOLD_S seconds (`held`: since when), so the large
        buckets' first kernels, slow to compile, do not hold up the others' measurements."""
        ready = getattr(self.measure, "ready", None)
        if ready is None:
            return list(active)
        now = time.monotonic()
        out = []
        for b in active:
            config = self.next_config(b)
            if config is None or ready(config) or now - held.setdefault(b.name, now) >= HOLD_S:
                held.pop(b.name, None)
                out.append(b)
            else:  # queued for compiling if it is not yet (a trial left waiting by another run)
                self.prefetch([config])
        return out or active[:1]

    def run(self, deadline: float | None) -> None:
        active = list(self.buckets)
        held: dict[str, float] = {}
        try:
            while active:
                for bucket in self.turn(active, held):
                    if deadline is not None and time.monotonic() >= deadline:
                        return
                    if not self.step(bucket):
                        active.remove(bucket)
                        best = self.best.get(bucket.name)
                        text = best and config_text(entry(best[1]))
                        self.shared.progress.finished(bucket.space.bucket, bucket.target, text)
                        if self.on_done is not None:
                            self.on_done(bucket, self.studies[bucket.name])
        finally:
            self.drop_pending()


def trial_record(t: optuna.trial.FrozenTrial) -> dict:
    rec = {"number": t.number, "state": t.state.name.lower()}
    rec["config"] = t.user_attrs.get("config", t.params)
    if "measurement" in t.user_attrs:
        m = dict(t.user_attrs["measurement"])
        meas = Measurement.from_dict(m)
        if meas.ok:
            m["score"] = round(meas.score, 3)
        rec.update(m)
    elif "skipped" in t.user_attrs:
        rec["skipped"] = t.user_attrs["skipped"]
    elif "repeat_of" in t.user_attrs:  # a proposal of a decided config: its score, again
        rec["repeat_of"] = t.user_attrs["repeat_of"]
    return rec


def collect(study: optuna.Study, bucket: Bucket) -> BucketResult:
    pairs = [(KernelConfig.from_dict(t.user_attrs["config"]), m) for t, m in measured_trials(study)]
    eager = next((m for c, m in pairs if c.strategy == "torch" and m.ok), None)
    trials = [
        trial_record(t) for t in study.get_trials(deepcopy=False) if t.state != TrialState.WAITING
    ]
    winner = pick_winner(pairs)
    graph = pick_graph_winner(pairs, winner)
    return BucketResult(
        bucket.space.bucket, bucket, winner, eager, graph, trials, len(pairs), pairs
    )


def carried_besides(job: Job) -> list[KernelConfig]:
    """The configs the module names besides this search's buckets: the heuristic default's
    (every module ships it), this GPU's cells of other buckets, other GPUs' (job.others)."""
    buckets = set(job.options.buckets) | set(job.previous)
    out = [heuristic_config(job.spec, b) for b in sorted(buckets)] + list(job.others)
    for b, cell in job.previous.items():
        if b not in job.options.buckets:
            out += previous_winners({b: cell}, b)
    return out


def fingerprint(studies) -> list[int]:
    """How many trials each bucket's study holds: what a decision was made on."""
    return [len(s.get_trials(deepcopy=False)) for s in studies]


class Results(dict):
    """{bucket: BucketResult}; `final`: this process decided the winners (and, through
    search's on_final, wrote them); False where another process does or did. `seconds`: the
    search's phases, wall time: "search" (the drivers), "decide" (PDL, re-measurement,
    consolidation and on_final's writing). `settle_seconds`: the part of "decide" spent waiting
    for the compiles in progress (Compiler.settle)."""

    final: bool = True
    seconds: dict | None = None
    settle_seconds: float = 0.0


def search(
    job: Job,
    measures: Sequence[Measure],
    storage,
    progress: Progress | None = None,
    on_final: Callable[[Results], None] | None = None,
) -> Results:
    """Tune every bucket of `job` with one driver per measure; returns each bucket's result.

    Processes sharing the storage cooperate (Claims): when a process has nothing left to
    measure it claims the decision, waits for the measurements others have in flight, then
    decides every bucket (PDL, re-measurement) and calls `on_final` holding the claim, so the
    module is written once, with every bucket. A process that finds the claim held, or the same
    trials decided since it started, only reads the results."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    started = time.time()
    t0 = time.perf_counter()
    storage = make_storage(storage)
    buckets = plan(job)
    opts = job.options
    deadline = None if opts.timeout is None else time.monotonic() + opts.timeout
    if progress is None:
        progress = Progress(sum(b.target for b in buckets))
    claims = Claims(storage, f"{job.spec.name}|{job.key}", CLAIM_TTL)
    for i, b in enumerate(buckets):  # single-threaded: create the studies, enqueue the firsts
        enqueue(open_study(storage, b, opts.seed + i), b.encoding, b.order())
    shared = Shared(storage, opts.seed, progress, claims, opts.bucket_timeout, opts.lookahead)
    pdl = job.pdl and job.recorded is None  # a replayed log has no PDL times
    prefetch = getattr(measures[0], "prefetch", None)

    def early_pdl(bucket: Bucket, study: optuna.Study, measure: Measure) -> None:
        """A bucket whose search is done: the PDL variants pdl_pass takes there are measured
        now, between the other buckets' candidates (which may wait for their compiles), and
        stored in the study, from which the decision's pdl_pass replays them. One worker does
        it (a claim), and the decision waits for it."""
        tid = claims.take(f"pdl {bucket.name}", study=bucket.name)
        if tid is None:  # another worker's
            return
        try:
            result = collect(study, bucket)
            prefetch([replace(c, pdl=True) for c, _ in pdl_picks(result)])
            pdl_pass(result, measure, study)
        finally:
            claims.release(tid)

    early = early_pdl if pdl and prefetch is not None else None
    # a measure may take several drivers (workers.WorkerMeasure.drivers), which take turns on it
    per = [m for m in measures for _ in range(getattr(m, "drivers", 1))]
    drivers = [
        Driver(i, buckets, m, shared, early and functools.partial(early, measure=m))
        for i, m in enumerate(per)
    ]
    for d in drivers[:1]:  # the firsts of every bucket (all of a brute-force one) compile first
        d.prefetch([c for b in buckets for c in b.order()])
    errors: list[BaseException] = []

    def run(d: Driver) -> None:
        try:
            d.run(deadline)
        except BaseException as e:  # re-raised below, in the calling thread
            errors.append(e)

    try:
        if len(drivers) == 1:
            drivers[0].run(deadline)
        else:
            threads = [threading.Thread(target=run, args=(d,), daemon=True) for d in drivers]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if errors:
                raise errors[0]
    finally:
        progress.close()
    studies = [drivers[0].studies[b.name] for b in buckets]
    results = Results()
    searched = time.perf_counter()
    results.seconds = {"search": round(searched - t0, 1), "decide": 0.0}
    # one decision per set of studies: runs over other buckets decide (and write) their own
    decision = "decide " + ",".join(b.name for b in buckets)
    token = claims.take(decision)
    if token is None:
        results.final = False
    try:
        if token is not None:
            while any(claims.working(b.name) for b in buckets):  # measurements in flight
                time.sleep(0.2)
            done = claims.study.user_attrs.get(decision)
            if done and done["trials"] == fingerprint(studies) and done["time"] >= started:
                results.final = False  # another process decided on these very trials
        for b, study in zip(buckets, studies):
            results[b.space.bucket] = collect(study, b)
        if not results.final:
            return results
        for m in measures:  # what is decided on is timed on measure.DECIDE, not QUICK
            if getattr(m, "quick", False):
                m.quick = False
        if pdl and prefetch is not None:  # every bucket's PDL variants compile at once
            prefetch([replace(c, pdl=True) for r in results.values() for c, _ in pdl_picks(r)])
        for b, study in zip(buckets, studies):
            if pdl:
                pdl_pass(results[b.space.bucket], measures[0], study)
        # the decisions' timings run on a quiet host: a host-bound call's time is tens of
        # percent slower beside a pool of compiling processes, more than the gaps it decides
        settle = getattr(measures[0], "settle", None)
        if settle is not None:
            t_settle = time.perf_counter()
            settle()
            results.settle_seconds = round(time.perf_counter() - t_settle, 1)
        for b, study in zip(buckets, studies):
            decide(results[b.space.bucket], measures[0], opts.recheck, study)
        if opts.share:
            by_bucket = {b.space.bucket: s for b, s in zip(buckets, studies)}
            consolidate(
                results, measures[0], opts.recheck, job.spec, carried_besides(job), by_bucket
            )
        if on_final is not None:
            on_final(results)
        claims.study.set_user_attr(decision, {"trials": fingerprint(studies), "time": time.time()})
    finally:
        if token is not None:
            claims.release(token)
        results.seconds["decide"] = round(time.perf_counter() - searched, 1)
    return results


# ---------------------------------------------------------------------------------------------
# Writing the results


def default_storage(module: Path) -> str:
    """The journal file beside the module (make_storage: why not SQLite)."""
    return str(Path(module).resolve().with_suffix(".optuna.journal"))


def winners_table(results: dict[int, BucketResult]) -> dict[int, dict]:
    """TUNED cells for this GPU: winner config, its times and the torch path's times."""
    table = {}
    for b, r in sorted(results.items()):
        if r.winner is None:
            continue
        config, m = r.winner
        t = m.times()
        if r.eager is not None:
            t.update(r.eager.eager_times())
        table[b] = entry(config, **t)
        if r.graph is not None:
            table[b] = with_graph_winner(table[b], r.graph[0], r.graph[1].us)
    return table


def versions() -> dict:
    import torch
    import triton

    return {
        "mlpgen": mlpgen.__version__,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda,
        "optuna": optuna.__version__,
    }


def tune(
    path: Path,
    job: Job,
    measures: Sequence[Measure],
    storage,
    extra: dict | None = None,
    progress: Progress | None = None,
) -> dict:
    """Search, then write this GPU's winners into the module and its trials beside it (the
    one process that decides them, where several share the storage: search)."""
    path = Path(path)
    t0 = time.perf_counter()
    opts = job.options
    provenance = {}
    log_path = trial_log_path(path)

    def write(results: Results) -> None:
        provenance.update(
            {
                **versions(),
                "date": datetime.datetime.now().isoformat(timespec="seconds"),
                "seed": opts.seed,
                "trials": opts.trials,
                "timeout": opts.timeout,
                "exhaustive": opts.exhaustive,
                "buckets": sorted(opts.buckets),  # a run over some buckets merges into the table
                "workers": len(measures),
                # this GPU's earlier cells, measured first (mlpgen retune of a tuned module)
                "seeded": len(job.previous),
                "measured": sum(r.measured for r in results.values()),
                "tuning_seconds": round(time.perf_counter() - t0, 1),
                **(extra or {}),
            }
        )
        table = winners_table(results)
        for b, cell in table.items():  # the train search's winner does not depend on the cell
            if "train" in job.previous.get(b, {}):
                cell["train"] = job.previous[b]["train"]
                if job.trained is not None:
                    provenance["train"] = job.trained
        if table:  # write_module keeps the default's other buckets
            write_module(
                path, job.spec, job.key, table, provenance, buckets=opts.buckets, merge=True
            )
        write_trial_log(path, job.spec, job.key, provenance, results)

    results = search(job, measures, storage, progress, on_final=write)
    seconds = time.perf_counter() - t0
    table = winners_table(results)
    return {
        "gpu": job.key,
        "module": str(path),
        "trial_log": str(log_path),
        "written": results.final,  # False: another process sharing the storage wrote it
        "seconds": round(seconds, 1),
        "phase_seconds": dict(results.seconds or {}),
        "settle_seconds": results.settle_seconds,
        "measured": sum(r.measured for r in results.values()),
        "buckets": {
            str(b): {
                "sampler": r.plan.sampler_name,
                "candidates": len(r.plan.space.candidates),
                "dropped": len(r.plan.space.dropped),
                "measured": r.measured,
                "winner": table.get(b),
                "recheck": r.recheck,
                "consolidated": r.consolidated,  # the neighbour's winner it took (consolidate)
            }
            for b, r in sorted(results.items())
        },
    }


# ---------------------------------------------------------------------------------------------
# The CLI entry point (a CUDA machine)


def gpu_key(device: int) -> str:
    """The generated module's key for a device: name, compute capability, SM count."""
    import torch

    p = torch.cuda.get_device_properties(device)
    return f"{p.name}|sm{p.major}{p.minor}|{p.multi_processor_count}"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build_native_lane(spec: MLPSpec, workdir: str) -> bool:
    """Build the generated modules' native lane here, once, before the workers time anything:
    a worker would otherwise build it inside its first candidate's time limit. Where it cannot
    be built (the module warns), the workers are told not to try (MLPGEN_NATIVE=0, which spawned
    workers inherit) and time the Python lane, which is then what this machine's calls take."""
    from mlpgen.runtime import native

    if native.build() is None:
        os.environ["MLPGEN_NATIVE"] = "0"
        return False
    return True


def tune_module(path: Path, opts: TuneOptions, quiet: bool = False) -> dict:
    """Tune the module at `path` on this machine's GPU(s) and write the winners into it.
    Kernels are compiled in a pool of processes just ahead of the measuring workers, only
    those the search measures. quiet: no progress lines (the caller prints JSON); the closing
    line is printed either way."""
    import torch

    from mlpgen.measure import warm_up
    from mlpgen.workers import Compiler, WorkerMeasure

    t0 = time.perf_counter()
    path = Path(path)
    spec, tuned, provenance = read_module(path)
    count = torch.cuda.device_count()
    devices = list(range(max(1, min(opts.workers, count))))
    key = gpu_key(devices[0])
    same = [d for d in devices if gpu_key(d) == key]
    if opts.workers > len(same) and not quiet:
        log(f"mlpgen: {len(same)} worker(s): {count} GPU(s) visible, {len(same)} like GPU 0")
    props = torch.cuda.get_device_properties(devices[0])
    job = Job(
        spec,
        key,
        opts,
        tuned.get(key, {}),
        getattr(props, "shared_memory_per_block_optin", 0) or MAX_SHARED,
        clusters=props.major >= 9,
        pdl=props.major >= 9,
        others=tuple(
            KernelConfig.from_dict(c)
            for k, table in tuned.items()
            if k not in (key, DEFAULT_KEY)
            for cell in table.values()
            for c in (cell, graph_cell(cell))
            if c is not None
        ),
        trained=provenance.get(key, {}).get("train"),
    )
    storage = opts.storage or default_storage(path)
    progress = Progress(sum(b.target for b in plan(job)), quiet=quiet)
    with tempfile.TemporaryDirectory(prefix="mlpgen-") as workdir:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        # its compiler runs beside the kernels' compiles, before any candidate is timed
        native = threading.Thread(target=build_native_lane, args=(spec, workdir), daemon=True)
        native.start()
        compiler = Compiler(
            spec, workdir, processes=max(1, (cpus or 2) - len(same)), device=devices[0]
        )
        # the first candidates of every bucket compile while the native lane builds
        compiler.prefetch([c for b in plan(job) for c in b.order()])
        measures = [
            WorkerMeasure(
                spec,
                workdir,
                device=d,
                limit_s=opts.candidate_timeout,
                seed=opts.seed,
                compiler=compiler,
                quick=True,
                warm=warm_up,
            )
            for d in same
        ]
        # the measuring processes start beside the native lane's build and the first compiles;
        # where the build fails they are started again, to inherit MLPGEN_NATIVE=0 (a worker
        # must not try the build inside a candidate's time limit)
        launched_with = os.environ.get("MLPGEN_NATIVE")
        for m in measures:
            m.launch()
        native.join()
        if os.environ.get("MLPGEN_NATIVE") != launched_with:
            for m in measures:
                m.close()
                m.launch()
        setup = time.perf_counter() - t0
        try:
            summary = tune(
                path,
                job,
                measures,
                storage,
                extra={"gpu": torch.cuda.get_device_name(devices[0]), "timeout": opts.timeout},
                progress=progress,
            )
            closing = time.perf_counter()
        finally:
            # the winners are written (or the run failed): the processes hold nothing to save,
            # and are killed rather than shut down one interpreter and CUDA context at a time
            for m in measures:
                m.close(graceful=False)
            compiler.close(graceful=False)
        # where the wall time went: before the search (the native lane's build, starting the
        # processes), the search and the decision (tune's), ending the processes
        summary["phase_seconds"] = {
            "setup": round(setup, 1),
            **summary["phase_seconds"],
            "close": round(time.perf_counter() - closing, 1),
        }
    # wall time from the start: the native lane's build, then compiling (overlapped with
    # measuring, so it has no time of its own) and measuring
    summary["total_seconds"] = round(time.perf_counter() - t0, 1)
    summary["compiled"] = compiler.compiled()
    summary["compile_errors"] = len(compiler.errors)
    # the compiling processes' seconds, and those of them the measuring waited for
    summary["compile_busy_seconds"] = round(compiler.busy_s, 1)
    summary["compile_wait_seconds"] = round(compiler.waited_s, 1)
    if sys.stderr.isatty() and not quiet:
        print_summary(summary)
    wrote = f"wrote {path}" if summary["written"] else "another process writes the module"
    log(
        f"mlpgen: tuned {len(summary['buckets'])} buckets on {key} in "
        f"{summary['total_seconds']:.0f}s ({summary['measured']} candidates measured, "
        f"{summary['compiled']} kernels compiled); {wrote}"
    )
    return summary


def print_summary(summary: dict) -> None:
    log(f"  {'bucket':>7}  {'sampler':<11} {'cands':>5} {'meas':>4}  winner")
    for b, r in summary["buckets"].items():
        w = r["winner"]
        if w is None:
            text = "none verified"
        else:
            text = f"{config_text(w)}  {w['us']:.2f} us"
            if "eager_us" in w and w["strategy"] != "torch":
                text += f" (torch {w['eager_us']:.2f} us)"
        log(f"  {b:>7}  {r['sampler']:<11} {r['candidates']:>5} {r['measured']:>4}  {text}")
