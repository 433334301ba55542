"""A bucket's winners from its measurements: the rules that turn a search's records into the
cells of a module's table.

- One score (Measurement.score) picks the winner, the number the sampler minimised.
- recheck: the best few candidates and the torch path are measured again, interleaved, and
  medians decide; a kernel wins only where it beats the torch path by more than the noise
  (never_slower).
- pdl_pass: PDL is measured on a bucket's fastest configs that take it, not assumed.
- pick_graph: a CUDA-graph winner beside the call winner, where GPU time alone sets it apart.
- consolidate: neighbouring buckets whose winners tie take one config, so the module carries
  fewer kernels.

Each takes `measure(bucket, config) -> Measurement`; samples go into the study's user
attributes where a study is given, so a resumed run replays them and decides the same.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import groupby
from typing import TYPE_CHECKING

from mlpgen import dispatch
from mlpgen.measure import Measurement
from mlpgen.render import module_lines
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies import STRATEGIES

if TYPE_CHECKING:
    import optuna

    from mlpgen.tune import Bucket

Measure = Callable[[int, KernelConfig], Measurement]

# After the search, the RECHECK_TOP best candidates and the torch path are measured
# RECHECK_ROUNDS more times, one round after another (interleaved, so a slow spell of the GPU or
# host hits them all alike); each is judged on the median of its samples: of three, one outlier
# decides nothing.
RECHECK_TOP = 3
RECHECK_ROUNDS = 2
RECHECK_KINDS = 3  # other strategies re-measured at a host-bound bucket (recheck)
# The least margin a kernel must beat the torch path by (the samples' spread counts where it is
# larger): a kernel within the noise of the torch path is no gain, and the torch path is safer.
NOISE = 0.02
# a CUDA-graph winner beside the call winner where it takes over 5% less GPU time
GRAPH_TIE = 0.05
# Once every bucket is decided, neighbouring buckets are offered each other's winners
# (consolidate): a module carries a kernel function per function its cells name and a
# strategy's launch code and helpers with its first cell, so a bucket whose winner alone needs
# a strategy costs every module tens to hundreds of lines for a gain within the noise. A bucket
# takes at most CONSOLIDATE_TRIES configs into such a comparison.
CONSOLIDATE_TRIES = 3
# PDL linking consecutive calls (KernelConfig.pdl) is tried on each bucket's PDL_TOP fastest
# kernel configs that take it (and its winner) once the search is done, on sm_90 GPUs; it is
# kept where it takes at least PDL_GAIN less GPU time: it speeds some kernels and slows others,
# so it is measured, not assumed.
PDL_TOP = 4
PDL_GAIN = 0.03


@dataclass
class BucketResult:
    bucket: int
    plan: Bucket | None  # None: a train search's (mlpgen.train_tune)
    winner: tuple[KernelConfig, Measurement] | None
    eager: Measurement | None
    graph: tuple[KernelConfig, Measurement] | None  # least GPU time, when not the winner
    trials: list[dict]
    measured: int
    pairs: list[tuple[KernelConfig, Measurement]] = field(default_factory=list)  # measured
    recheck: list[dict] = field(default_factory=list)  # re-measured candidates: scores, median
    # consolidate's comparisons with neighbours' winners, and the one taken (from, to, medians)
    consolidate: list[dict] = field(default_factory=list)
    consolidated: dict | None = None


def pick_winner(records: Sequence[tuple[KernelConfig, Measurement]]):
    """The verified candidate of least score (Measurement.score, the number the sampler
    minimises); an exact tie goes to the one of less GPU time."""
    ok = [(c, m) for c, m in records if m.ok]
    if not ok:
        return None
    return min(ok, key=lambda cm: (cm[1].score, cm[1].us))


def pick_graph_winner(records, winner):
    """The verified candidate with the least GPU time, to run while a CUDA graph is captured
    (a replay has no per-call host cost, so host time does not count), or None when the winner
    is within GRAPH_TIE of it: at host-bound buckets the two differ."""
    ok = [(c, m) for c, m in records if m.ok]
    if not ok or winner is None:
        return None
    c, m = min(ok, key=lambda cm: cm[1].us)
    return None if winner[1].us <= m.us * (1 + GRAPH_TIE) else (c, m)


def host_bound(m: Measurement) -> bool:
    """Whether a call's host time sets its score (small batches), not its GPU time."""
    return m.host_us is not None and m.us is not None and m.host_us >= m.us


def relative_spread(values: Sequence[float]) -> float:
    """The median absolute deviation of a config's scores over their median: how far its
    measurements typically disagreed. One outlier of three (a page fault, a clock change)
    moves it no more than it moves the median, so it cannot make a 5x gap look like noise."""
    med = statistics.median(values)
    return statistics.median(abs(v - med) for v in values) / med if med > 0 else 0.0


def median_measurement(ms: Sequence[Measurement]) -> Measurement:
    """One measurement from several of one config: each time (nn.Sequential's beside the torch
    path's too) the median of its samples, the spread the larger of the scores' spread and the
    median of the timings' own (medians: one disturbed measurement decides nothing)."""

    def median(name: str) -> float | None:
        values = [getattr(m, name) for m in ms if getattr(m, name) is not None]
        return statistics.median(values) if values else None

    within = statistics.median((m.spread or 0.0) for m in ms)
    spread = max(within, relative_spread([m.score for m in ms])) if len(ms) > 1 else ms[0].spread
    times = {name: median(name) for name in ("us", "host_us", "seq_us", "seq_host_us")}
    return replace(ms[0], **times, spread=spread)


def never_slower(winner, eager):
    """The winner, or the torch path where a kernel does not beat it by more than the noise
    (NOISE, or the larger spread of the two where that is larger), or loses more GPU time to it
    than it gains in score: where host time sets the score (a training step's autograd, say), a
    kernel that keeps the GPU busier is slower wherever the host gets out of the way (a CUDA
    graph, a faster CPU), so it wins only where its worse case is the torch path's better one."""
    if winner is None or eager is None or winner[0].strategy == "torch":
        return winner
    (_, m), (tc, tm) = winner, eager
    margin = max(NOISE, m.spread or 0.0, tm.spread or 0.0)
    gain = tm.score / m.score  # > 1 + margin: faster per call
    gpu_loss = 1.0 if m.us is None or tm.us is None else m.us / tm.us
    return winner if gain > 1 + margin and gpu_loss < gain else (tc, tm)


def pick_never_slower(records: Sequence[tuple[KernelConfig, Measurement]], eager):
    """The verified candidate of least score that never_slower keeps against the torch path
    `eager`, else the torch path. A kernel of the least score that never_slower turns down for
    its GPU time gives way to the next one, which may keep the GPU no busier than the torch path
    (host-bound training steps: fused variants save launches and cost GPU time)."""
    if eager is None:
        return pick_winner(records)
    ok = sorted(((c, m) for c, m in records if m.ok), key=lambda cm: (cm[1].score, cm[1].us))
    for c, m in ok:
        if never_slower((c, m), eager)[0] == c:
            return c, m
    return eager


def recheck(result: BucketResult, measure: Measure, rounds: int, study=None) -> None:
    """Measure the RECHECK_TOP best candidates (at a host-bound bucket, also the best of each
    strategy and the kernel of least GPU time) and the torch path `rounds` more times,
    interleaved, and decide on medians (pick_never_slower); a candidate that fails a
    re-measurement is out. The samples go into result.recheck (and the trial log), and into the
    study's user attributes: a resumed run replays them instead of measuring again."""
    ok = sorted((cm for cm in result.pairs if cm[1].ok), key=lambda cm: (cm[1].score, cm[1].us))
    top = ok[:RECHECK_TOP]
    fresh = rounds > 0 and bool(top) and host_bound(top[0][1])
    if fresh:
        # a call of a few µs: re-measuring is cheap, and the host's speed drifts over a run
        # (compiles ran beside the search) by more than the gaps between strategies, so
        # scores taken minutes apart do not rank them. The kernel of least GPU time of each
        # other strategy, linked (PDL) or not, is re-measured with the rest (RECHECK_KINDS at
        # most): its host time is the launch path's, and its GPU time is what sets it apart.
        # The decision rests on the re-measurements alone, one round more of them.
        # So is the kernel of least GPU time of all: where the best scores keep the GPU busier
        # than the torch path, it is the one never_slower may keep.
        kinds = {(c.strategy, getattr(c, "pdl", False)) for c, _ in top}  # train configs: no PDL
        by_gpu = sorted(ok, key=lambda cm: math.inf if cm[1].us is None else cm[1].us)
        least = next((cm for cm in by_gpu if cm[0].strategy != "torch"), None)
        if least is not None and least not in top:
            top.append(least)
            kinds.add((least[0].strategy, getattr(least[0], "pdl", False)))
        for c, m in by_gpu:
            kind = (c.strategy, getattr(c, "pdl", False))
            if kind not in kinds and len(top) < RECHECK_TOP + RECHECK_KINDS:
                kinds.add(kind)
                top.append((c, m))
    top += [cm for cm in ok if cm[0].strategy == "torch" and cm not in top][:1]
    samples = {c: [] if fresh else [m] for c, m in top}
    again = getattr(measure, "again", measure)  # each was verified at this bucket: time it
    for r in range(rounds + fresh):
        for c in samples:
            name = f"recheck {r} " + json.dumps(c.to_dict(), sort_keys=True)
            stored = study.user_attrs.get(name) if study is not None else None
            m = Measurement.from_dict(stored) if stored else again(result.bucket, c)
            if study is not None and not stored:
                study.set_user_attr(name, m.to_dict())
            samples[c].append(m)
    decided = []
    result.recheck = []
    for c, ms in samples.items():
        entry_ = {"config": c.to_dict(), "scores": [m.score and round(m.score, 3) for m in ms]}
        if all(m.ok for m in ms):
            med = median_measurement(ms)
            decided.append((c, med))
            entry_.update(median=round(med.score, 3), spread=round(med.spread or 0.0, 4))
        result.recheck.append(entry_)
    eager = next(((c, m) for c, m in decided if c.strategy == "torch"), None)
    result.winner = pick_never_slower(decided, eager)
    if eager is not None:
        result.eager = eager[1]


def pdl_picks(result: BucketResult) -> list[tuple[KernelConfig, Measurement]]:
    """The (config, its measurement without PDL) pairs whose PDL variants pdl_pass measures:
    the PDL_TOP fastest that take PDL, the winner, the previous winners that ran linked; those
    whose variant was measured already left out."""
    ok = [(c, m) for c, m in result.pairs if m.ok and c.takes_pdl and not c.pdl]
    tried = {c for c, _ in result.pairs}
    picks = sorted(ok, key=lambda cm: cm[1].us)[:PDL_TOP]
    if result.winner is not None and result.winner[0].takes_pdl and result.winner not in picks:
        picks.append(result.winner)
    picks += [cm for cm in ok if cm[0] in result.plan.linked and cm not in picks]
    return [(c, m) for c, m in picks if replace(c, pdl=True) not in tried]


def pdl_pass(result: BucketResult, measure: Measure, study: optuna.Study | None = None):
    """Try PDL (KernelConfig.pdl) on the bucket's PDL_TOP fastest configs that take it
    (KernelConfig.takes_pdl), its winner and the previous winners that ran with it
    (tune.Bucket.linked: a budgeted re-tune may rank such a config low without PDL and would never
    try it linked); a PDL variant joins the bucket's records where it took PDL_GAIN less GPU
    time than the same config without. Its measurements are recorded as trials of state "pdl",
    and kept in the study's user attributes: a resumed run replays them instead of measuring
    again (so it picks the same winners)."""
    added = []
    for config, base in pdl_picks(result):
        linked = replace(config, pdl=True)
        name = "pdl " + json.dumps(linked.to_dict(), sort_keys=True)
        stored = study.user_attrs.get(name) if study is not None else None
        m = Measurement.from_dict(stored) if stored else measure(result.bucket, linked)
        if study is not None and not stored:
            study.set_user_attr(name, m.to_dict())
        record = {"number": None, "state": "pdl", "config": linked.to_dict(), **m.to_dict()}
        result.trials.append(record)  # `measured` stays the search's own count
        if m.ok and m.us <= base.us * (1 - PDL_GAIN):
            added.append((linked, m))
    result.pairs = result.pairs + added
    result.winner = pick_winner(result.pairs)
    return result


def decide(result: BucketResult, measure: Measure, rounds: int, study=None) -> BucketResult:
    """The bucket's winners: the call winner on re-measured medians (recheck: never slower than
    the torch path), and the CUDA-graph winner. A CUDA graph's replays do not overlap one
    another (PDL links kernels of one graph or stream, not graph launches), so the graph winner
    is judged on times without PDL."""
    recheck(result, measure, rounds, study)
    pick_graph(result)
    return result


def pick_graph(result: BucketResult) -> None:
    """result.graph for its winner: the graph winner, judged on times without PDL."""
    if result.winner is None:
        result.graph = None
        return
    unlinked = [(c, m) for c, m in result.pairs if not c.pdl]
    plain = replace(result.winner[0], pdl=False)
    mine = next(((c, m) for c, m in unlinked if c == plain), result.winner)
    result.graph = pick_graph_winner(unlinked, mine)


TORCH = KernelConfig(strategy="torch")


def run_units(spec: MLPSpec, config: KernelConfig) -> tuple[str, str, str]:
    """What neighbouring cells may share, coarsest first: the launch (a strategy, stream_tma
    apart from stream), the kernel function (tile variants share one) and the kernel."""
    s = STRATEGIES[config.strategy]
    function = s.function_name(spec, config) if s.has_kernel else config.strategy
    return dispatch.launch_kind(config.to_dict()), function, config.kernel_name or config.strategy


def moves(spec: MLPSpec, winners: dict[int, KernelConfig]) -> list[tuple[tuple[int, ...], int]]:
    """(run, side): each maximal run of neighbouring buckets whose winners share a unit
    (run_units), to take the winner of the bucket `side` just beside it (not the torch path)."""
    buckets = sorted(winners)
    out = set()
    for level in range(3):
        i = 0
        for _, group in groupby(buckets, lambda b, lv=level: run_units(spec, winners[b])[lv]):
            run = tuple(group)
            for side in (i - 1, i + len(run)):
                if 0 <= side < len(buckets) and winners[buckets[side]] != TORCH:
                    out.add((run, buckets[side]))
            i += len(run)
    return sorted(out)


def carried(results: dict[int, BucketResult], fixed, run=(), config=None) -> list[KernelConfig]:
    """The configs a module names: `fixed`, each bucket's winner (`config` at the buckets of
    `run`) and each CUDA-graph winner."""
    out = list(fixed)
    for b, r in results.items():
        if r.winner is not None:
            out.append(config if b in run else r.winner[0])
        if r.graph is not None:
            out.append(r.graph[0])
    return out


def compare(r: BucketResult, own: KernelConfig, other: KernelConfig, measure, rounds, study):
    """Measure `other` at r's bucket beside its decided winner `own`, rounds + 1 times
    interleaved: (own's median, other's median) where other's is within the noise of own's
    (NOISE, or the larger spread) and beats the torch path (never_slower, on the torch path's
    median that recheck took: the margins between a kernel and the torch path are wide where
    a neighbour's winner is worth offering, so they are not measured again), else None. The
    medians go into r.consolidate (the trial log), the samples into the study's user
    attributes: a resumed run replays them."""
    samples = {c: [] for c in (own, other)}
    again = getattr(measure, "again", measure)  # time what this bucket verified
    for i in range(rounds + 1):
        for c in samples:
            name = f"consolidate {i} {json.dumps(other.to_dict(), sort_keys=True)} "
            name += json.dumps(c.to_dict(), sort_keys=True)
            stored = study.user_attrs.get(name) if study is not None else None
            fresh = c == other and i == 0  # `other` is verified here by its first measurement
            timing = measure if fresh else again
            m = Measurement.from_dict(stored) if stored else timing(r.bucket, c)
            if study is not None and not stored:
                study.set_user_attr(name, m.to_dict())
            samples[c].append(m)
    med = {c: median_measurement(ms) for c, ms in samples.items() if all(m.ok for m in ms)}
    o, m, t = med.get(own), med.get(other), r.eager
    ok = o is not None and m is not None
    if ok:
        margin = max(NOISE, o.spread or 0.0, m.spread or 0.0)
        eager = None if t is None else (TORCH, t)
        ok = m.score <= o.score * (1 + margin) and never_slower((other, m), eager) == (other, m)
    r.consolidate.append(
        {
            "config": other.to_dict(),
            "median": m and round(m.score, 3),
            "winner": own.to_dict(),
            "winner_median": o and round(o.score, 3),
            "torch_median": t and round(t.score, 3),
            "within": ok,
        }
    )
    return (o, m) if ok else None


def consolidate(
    results: dict[int, BucketResult],
    measure: Measure,
    rounds: int,
    spec: MLPSpec,
    fixed: Sequence[KernelConfig] = (),
    studies=None,
) -> None:
    """Ship fewer kernels where neighbouring buckets' winners tie. Of the moves (a run of
    buckets sharing a strategy, function or kernel taking the winner beside it) that would make
    the module shorter (render.module_lines of this table's configs and `fixed`, the others it
    carries), the one that saves most (a whole strategy before a tile variant; then the shorter
    run) is tried: its config is compared with each bucket's decided winner (compare), nearest
    bucket first, and taken where it ties at every bucket of the run and the module, CUDA-graph
    winners picked again, is shorter; then the moves are listed again. Each comparison is made
    once, at most CONSOLIDATE_TRIES a bucket, so the pass is bounded. A bucket that takes a
    config records it (from what, to what, both medians) in r.consolidated."""
    decided = {b: r.winner[0] for b, r in results.items() if r.winner is not None}

    def state(b: int) -> tuple:
        r = results[b]
        return r.winner, r.pairs, r.graph, r.consolidated

    def restore(b: int, to: tuple) -> None:
        r = results[b]
        r.winner, r.pairs, r.graph, r.consolidated = to

    original = {b: state(b) for b in decided}
    compared: dict[tuple[int, KernelConfig], tuple | None] = {}

    def ties(b: int, config: KernelConfig) -> bool:
        if config == decided[b]:
            return True
        if (b, config) not in compared:
            if sum(bb == b for bb, _ in compared) >= CONSOLIDATE_TRIES:
                return False
            study = studies.get(b) if studies else None
            compared[b, config] = compare(results[b], decided[b], config, measure, rounds, study)
        return compared[b, config] is not None

    while True:
        now = module_lines(spec, carried(results, fixed))
        options = []
        for run, side in moves(spec, {b: results[b].winner[0] for b in decided}):
            config = results[side].winner[0]
            lines = module_lines(spec, carried(results, fixed, run, config))
            if lines < now:
                options.append((lines, len(run), run, side, config))
        for _, _, run, side, config in sorted(options, key=lambda o: o[:4]):
            if not all(ties(b, config) for b in sorted(run, key=lambda b: abs(b - side))):
                continue
            before = {b: state(b) for b in run}
            for b in run:
                r = results[b]
                if config == decided[b]:  # back to its own winner
                    restore(b, original[b])
                    continue
                o, m = compared[b, config]
                r.winner, r.pairs = (config, m), [*r.pairs, (config, m)]
                pick_graph(r)
                r.consolidated = {
                    "from": decided[b].to_dict(),
                    "from_median": round(o.score, 3),
                    "to": config.to_dict(),
                    "to_median": round(m.score, 3),
                }
            if module_lines(spec, carried(results, fixed)) < now:
                break
            for b, to in before.items():  # the CUDA-graph winners kept what it saved
                restore(b, to)
        else:
            return
