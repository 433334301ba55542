"""The tuner's logic against a synthetic landscape (no GPU): it finds the optimum within its
budget, never selects a failed or wrong candidate, measures the default first, resumes an
interrupted study without repeating trials, shares studies between workers, and writes
winners and trial logs that merge per GPU.

The tests search a fixed table (TABLE, pinned for every test) from a fixed heuristic default
(DEFAULT, pinned too) rather than the production domains and heuristic, so that tuning those
changes none of what is checked here."""

import dataclasses
import io
import json
import math
import multiprocessing
import os
import statistics
import threading
import time
from types import SimpleNamespace

import optuna
import pytest

from mlpgen import dispatch, space
from mlpgen.decide import PDL_GAIN, PDL_TOP, pick_never_slower, pick_winner
from mlpgen.emit import entry, read_module, with_graph_winner, write_module
from mlpgen.measure import HIDDEN_WEIGHT, Measurement
from mlpgen.selfcheck import load_module
from mlpgen.space import DEFAULT_BUCKETS, search_space
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies import rowblock
from mlpgen.trial_log import trial_log_path
from mlpgen.tune import (
    POLISH_STEPS,
    Encoding,
    Job,
    Known,
    Objective,
    Progress,
    Skip,
    TuneOptions,
    plan,
    search,
    tune,
)
from mlpgen.workers import WorkerMeasure, WorkerStartError

SPEC = MLPSpec((256, 512, 256))
KEY_A, KEY_B = "Fake GPU A|sm90|132", "Fake GPU B|sm80|108"
TORCH = KernelConfig(strategy="torch")
TRAP = KernelConfig(block_m=64, chunk=32, num_warps=8)  # the fastest time, but wrong
PERSIST_BEST = KernelConfig(strategy="persist", block_m=32, block_n=128, num_warps=8, num_stages=3)
# The pinned heuristic default of every bucket: a table point of the strategy that wins, one
# step away from PERSIST_BEST in each of its three searched fields.
DEFAULT = KernelConfig(strategy="persist", block_m=64, block_n=64, num_warps=4, num_stages=3)

# The searched table: rowblock (where the landscape's failures are) and persist, the pinned
# default's strategy. Each has a searched field of its own (chunk, block_n) and one-valued
# fields (num_stages; block_k) that are no Optuna parameters.
TABLE = {
    "rowblock": {
        "block_m": (16, 32, 64, 128),
        "chunk": (32, 64, 128),
        "num_warps": (2, 4, 8),
        "num_stages": (1,),
    },
    "persist": {
        "block_m": (32, 64, 128),
        "block_n": (64, 128),
        "block_k": (64,),
        "num_warps": (4, 8),
        "num_stages": (3,),
    },
    "torch": {},
}
PRODUCTION = {s: dict(d) for s, d in space.DOMAINS.items()}  # read before any test pins TABLE
PRODUCTION_HEURISTIC = space.heuristic_config  # likewise, before any test pins DEFAULT
PRODUCTION_MAX_HELD = rowblock.MAX_HELD_ACTIVATIONS


def use_table() -> None:
    """Pin TABLE and DEFAULT in this process: for spawned processes, which import the
    production table and heuristic."""
    from conftest import heuristic_holders

    space.DOMAINS.clear()
    space.DOMAINS.update(TABLE)
    rowblock.MAX_HELD_ACTIVATIONS = UNLIMITED
    for module in heuristic_holders():
        module.heuristic_config = lambda spec, m: DEFAULT


UNLIMITED = 1 << 40  # the landscape's 128-row rowblock tiles (its crashes) stay candidates


@pytest.fixture(autouse=True)
def fixed_table(pin_domains, pin_heuristic, monkeypatch):
    pin_domains(TABLE)
    pin_heuristic(DEFAULT)
    monkeypatch.setattr(rowblock, "MAX_HELD_ACTIVATIONS", UNLIMITED)


@pytest.fixture
def production_table(pin_domains, pin_heuristic, monkeypatch):
    """For the tests that check the production table and heuristic (after fixed_table)."""
    pin_domains(PRODUCTION)
    pin_heuristic(PRODUCTION_HEURISTIC)
    monkeypatch.setattr(rowblock, "MAX_HELD_ACTIVATIONS", PRODUCTION_MAX_HELD)


def landscape(bucket: int, c: KernelConfig) -> Measurement:
    """Smooth in log2 of each field with failures: rowblock best at block_m 32 / chunk 64 /
    8 warps (10 us), persist better, best at block_m 32 / block_n 128 / 8 warps (9 us), away
    from the pinned default (DEFAULT). Small buckets are host-bound (12 us)."""
    small = bucket <= 1024
    scale = max(1.0, bucket / 1024)
    if c.strategy == "torch":
        us = 20.0 * scale
        return Measurement("ok", us=us, host_us=60.0 if small else None, err=0.0)
    if c.strategy == "persist":
        d = (
            0.3 * abs(math.log2(c.block_m / 32))
            + 0.2 * abs(math.log2(c.block_n / 128))
            + 0.15 * abs(math.log2(c.num_warps / 8))
        )
        us = 9.0 * (1 + d) * scale
        return Measurement("ok", us=us, host_us=12.0 if small else None, err=1e-3)
    if c == TRAP:
        return Measurement("wrong", "rel err 3.1e-01 > 0.01 at M=77", us=0.5, err=0.31)
    if (c.block_m, c.chunk, c.num_warps) == (32, 128, 4):
        return Measurement("wrong", "NaN/Inf in the output > 0.01 at M=64", err=math.inf)
    if (c.chunk, c.num_warps) == (128, 8) and c.block_m == 16:
        return Measurement("error", "PTXASError: out of resource: shared memory")
    if (c.block_m, c.chunk, c.num_warps) == (16, 32, 8):
        return Measurement("timeout", "no answer within 30s (hang?); worker replaced")
    if c.block_m == 128:
        return Measurement("crash", "worker died (killed by SIGSEGV); worker replaced")
    d = (
        0.3 * abs(math.log2(c.block_m / 32))
        + 0.2 * abs(math.log2(c.chunk / 64))
        + 0.15 * abs(math.log2(c.num_warps / 8))
    )
    us = 10.0 * (1 + d) * scale
    return Measurement("ok", us=us, host_us=12.0 if small else None, err=1e-3)


def optimum(bucket: int) -> tuple[KernelConfig, Measurement]:
    """What brute force must pick (scores within 2% of the best: the least GPU time)."""
    return pick_winner([(c, landscape(bucket, c)) for c in search_space(SPEC, bucket).candidates])


class Recorder:
    """A measure that records every call (thread-safe) and can fail on the n-th call."""

    def __init__(self, fn=landscape, interrupt_at=None, delay=0.0):
        self.fn, self.interrupt_at, self.delay = fn, interrupt_at, delay
        self.calls, self.lock = [], threading.Lock()

    def __call__(self, bucket, config):
        with self.lock:
            self.calls.append((bucket, config))
            n = len(self.calls)
        if self.interrupt_at is not None and n == self.interrupt_at:
            raise KeyboardInterrupt
        if self.delay:
            time.sleep(self.delay)
        return self.fn(bucket, config)


def memory():
    return optuna.storages.InMemoryStorage()


def quiet():
    return Progress(0, enabled=False, quiet=True)


def job(buckets, trials=40, key=KEY_A, **kw):
    """A job over the pinned table; no re-measurement and no kernel sharing unless asked
    (`recheck`, `share`), so that every call of a measure is the search's own."""
    previous = kw.pop("previous", {})
    kw.setdefault("recheck", 0)
    kw.setdefault("share", False)
    return Job(SPEC, key, TuneOptions(buckets=buckets, trials=trials, **kw), previous)


def first_measured(result, n):
    return [KernelConfig.from_dict(t["config"]) for t in result.trials if "verdict" in t][:n]


# ---------------------------------------------------------------------------------------------


def test_brute_force_finds_the_optimum_and_never_selects_a_failure():
    rec = Recorder()
    results = search(job((1, 64, 4096)), [rec], memory(), quiet())
    for b, r in results.items():
        space = search_space(SPEC, b)
        assert r.plan.brute and r.measured == len(space.candidates)
        config, m = r.winner
        assert m.ok and (config, m) == optimum(b)
        assert config != TRAP
        verdicts = {t["verdict"] for t in r.trials}
        assert {"ok", "error"} <= verdicts and r.eager == landscape(b, TORCH)
        for t in r.trials:
            assert (t["state"] == "complete") == (t["verdict"] == "ok")
            assert t["verdict"] == "ok" or t["reason"]
    assert len(rec.calls) == len(set(rec.calls))  # nothing measured twice
    # the strategy is searched like the tile sizes: rowblock wins one row, persist the rest
    assert results[1].winner[0].strategy == "rowblock"
    assert results[64].winner[0] == results[4096].winner[0] == PERSIST_BEST
    assert {v for r in results.values() for v in (t["verdict"] for t in r.trials)} == {
        "ok",
        "wrong",
        "error",
        "timeout",
        "crash",
    }


def test_a_30_percent_budget_stays_within_budget_and_gets_within_3_percent():
    rec = Recorder()
    buckets = (256, 1024, 4096, 16384)  # 35 candidates each: 9 trials are a 26% budget
    assert all(9 <= 0.3 * len(search_space(SPEC, b).candidates) for b in buckets)
    results = search(job(buckets, trials=9, lookahead=3), [rec], memory(), quiet())
    for b, r in results.items():
        assert r.plan.sampler_name == "local+tpe" and r.measured == 9
        assert sum(1 for bb, _ in rec.calls if bb == b) == 9
        config, m = r.winner
        assert m.ok and config != TRAP
        assert m.score <= 1.03 * optimum(b)[1].score
        assert first_measured(r, 2) == [DEFAULT, TORCH]


def test_tpe_alone_respects_the_budget(monkeypatch):
    monkeypatch.setattr("mlpgen.tune.LOCAL_STEPS", 0)
    rec = Recorder()
    results = search(job((4096,), trials=12, seed=1), [rec], memory(), quiet())
    r = results[4096]
    assert r.measured == 12 == len(rec.calls) == len(set(rec.calls))
    assert r.winner[1].ok and r.winner[1].score <= 1.5 * optimum(4096)[1].score


def test_a_budgets_last_steps_climb_from_the_best_of_each_leading_strategy(monkeypatch):
    """With TPE alone in between (no local steps) and one trial asked at a time, each of a
    budget's last polish_steps measurements is an untried config one field one step away from
    the best config so far of a launch kind (a strategy; stream's TMA tiles apart) within
    POLISH_BAND of the best score, while there is one; the search ends on a local optimum."""
    from mlpgen.tune import POLISH_BAND, polish_steps

    monkeypatch.setattr("mlpgen.tune.LOCAL_STEPS", 0)
    rec = Recorder()
    b, n = 4096, 14
    results = search(job((b,), trials=n, seed=3, lookahead=1), [rec], memory(), quiet())
    assert results[b].measured == n == len(rec.calls) and polish_steps(n) > POLISH_STEPS
    encoding = Encoding(search_space(SPEC, b).domains())
    configs = [c for _, c in rec.calls]
    polished = 0
    for i in range(n - polish_steps(n), n):
        ok = sorted(
            ((c, landscape(b, c)) for c in configs[:i] if landscape(b, c).ok),
            key=lambda p: (p[1].score, p[1].us),
        )
        centres = {}
        for c, m in ok:
            if m.score <= ok[0][1].score * (1 + POLISH_BAND):
                centres.setdefault(dispatch.launch_kind(c.to_dict()), c)
        near = [x for c in centres.values() for x in encoding.neighbours(c)]
        untried = [c for c in near if c not in configs[:i]]
        if untried:
            assert configs[i] in untried, (i, configs[i])
            polished += 1
    assert polished >= 2  # not vacuous: polish steps had untried neighbours to take
    # the search ended on a local optimum: no neighbour of the winner left unmeasured
    winner = results[b].winner[0]
    assert winner == PERSIST_BEST and set(encoding.neighbours(winner)) <= set(configs)


def test_the_climb_starts_from_the_best_of_each_launch_kind(pin_domains):
    """stream's TMA tiles are a kernel and launch of their own, so the best TMA config is
    climbed from even where a plain stream config measured better (the headline's exhaustive
    H200 log at 65536 rows: the optimum is a TMA config, its plain twin second): the climb's
    turns alternate between the two kinds' bests."""
    import random

    from mlpgen.tune import Driver

    tiles = {"block_m": (64, 128), "block_n": (32, 64), "chunk": (64, 128), "num_warps": (4, 8)}
    pin_domains({**TABLE, "stream": {**tiles, "num_stages": (2,), "tma": (0, 1)}})
    h200 = Job(SPEC, KEY_A, TuneOptions(buckets=(65536,)), max_shared=227 * 1024)
    bucket = plan(h200)[0]
    stream = [c for c in bucket.space.candidates if c.strategy == "stream"]
    plain = next(c for c in stream if not c.tma)
    tma = next(
        c
        for c in stream
        if c.tma and not set(bucket.encoding.neighbours(c)) & set(bucket.encoding.neighbours(plain))
    )
    known = {plain: Known(0, Measurement("ok", us=90.0)), tma: Known(1, Measurement("ok", us=95.0))}
    left = set(bucket.space.candidates) - set(known)
    driver = SimpleNamespace(turns={}, rng=random.Random(0))
    picks = [Driver.polish(driver, bucket, known, left) for _ in range(2)]
    assert picks[0] in bucket.encoding.neighbours(plain)
    assert picks[1] in bucket.encoding.neighbours(tma)


def test_default_and_previous_winner_are_measured_first():
    best = optimum(4096)[0]
    previous = {4096: entry(best, us=9.0), 64: entry(TORCH)}
    results = search(job((4096, 16), trials=5, previous=previous), [Recorder()], memory(), quiet())
    assert best != DEFAULT
    assert first_measured(results[4096], 3) == [DEFAULT, best, TORCH]
    assert results[4096].winner[0] == best
    # a bucket new to this GPU starts from the nearest previous bucket's winner (64 -> 16)
    assert first_measured(results[16], 2) == [DEFAULT, TORCH]


def test_previous_graph_winner_and_pdl_winner_are_measured_first():
    """A previous CUDA-graph winner is measured first too (a budgeted re-tune need not find it
    again); a previous winner with PDL is measured as the space holds it, PDL off."""
    call = dataclasses.replace(optimum(4096)[0], pdl=True)
    graph = KernelConfig(strategy="persist", block_m=64, block_n=128, block_k=64, num_stages=3)
    assert graph in search_space(SPEC, 4096).candidates and graph not in (call, DEFAULT)
    previous = {4096: with_graph_winner(entry(call, us=9.0), graph, 8.0)}
    results = search(job((4096,), trials=5, previous=previous), [Recorder()], memory(), quiet())
    unlinked = dataclasses.replace(call, pdl=False)
    assert first_measured(results[4096], 4) == [DEFAULT, unlinked, graph, TORCH]


def test_a_torch_default_is_the_torch_candidate_measured_once(pin_heuristic):
    """Where the heuristic falls back to the torch path (wide MLPs at large batches), the
    default and the torch path are one candidate: measured first, once, and the search goes on
    from it, sampled or brute force, with a previous winner that is torch too."""
    pin_heuristic(TORCH)
    for options in ({"trials": 5}, {"exhaustive": True}):
        rec = Recorder()
        previous = {4096: entry(TORCH)}
        results = search(
            job((1, 4096, 16384), previous=previous, **options), [rec], memory(), quiet()
        )
        assert len(rec.calls) == len(set(rec.calls))  # nothing measured twice
        for b, r in results.items():
            assert r.plan.first[0] == TORCH and r.plan.first.count(TORCH) == 1
            assert first_measured(r, 1) == [TORCH]
            assert [c for bb, c in rec.calls if bb == b].count(TORCH) == 1
            assert r.measured == (len(r.plan.space.candidates) if r.plan.brute else 5)
            assert r.eager == landscape(b, TORCH)
            assert r.winner[0] != TORCH and r.winner[1].score < r.eager.score


def test_objective_with_fixed_trials():
    space = search_space(SPEC, 64)
    enc = Encoding(space.domains())
    known = {}
    rec = Recorder()
    objective = Objective(space, rec, known)
    best = KernelConfig(block_m=32, chunk=64, num_warps=8)

    trial = optuna.trial.FixedTrial(enc.params(best))
    assert objective(trial) == landscape(64, best).score == 14.0  # host 12 µs + 0.2 * GPU 10
    assert trial.user_attrs["measurement"]["verdict"] == "ok"
    assert trial.user_attrs["config"] == best.to_dict() and best in known

    repeat = optuna.trial.FixedTrial(enc.params(best))  # its recorded score, not measured
    assert objective(repeat) == 14.0
    assert len(rec.calls) == 1 and repeat.user_attrs["repeat_of"] == 0

    wrong = optuna.trial.FixedTrial(enc.params(TRAP))
    with pytest.raises(optuna.TrialPruned, match="wrong: rel err"):
        objective(wrong)
    assert wrong.user_attrs["measurement"]["reason"].startswith("rel err")
    with pytest.raises(optuna.TrialPruned, match="repeat of trial 0: wrong"):  # still bad
        objective(optuna.trial.FixedTrial(enc.params(TRAP)))

    infeasible = KernelConfig(block_m=64, chunk=128, num_warps=2)
    assert infeasible not in space
    skipped = optuna.trial.FixedTrial(enc.params(infeasible))
    with pytest.raises(optuna.TrialPruned, match="registers"):
        objective(skipped)
    assert "infeasible" in skipped.user_attrs["skipped"] and len(rec.calls) == 2

    def broken(bucket, config):
        raise OSError("pipe closed")

    other = KernelConfig(block_m=16, chunk=64, num_warps=4)
    with pytest.raises(optuna.TrialPruned, match="error: OSError: pipe closed"):
        Objective(space, broken, {})(optuna.trial.FixedTrial(enc.params(other)))

    def no_worker(bucket, config):
        raise WorkerStartError("a worker process died starting (exit code 1)")

    with pytest.raises(WorkerStartError):  # no verdict on the candidate: the run stops
        Objective(space, no_worker, {})(optuna.trial.FixedTrial(enc.params(other)))

    busy = Objective(space, rec, {}, claim=lambda c: "being measured by another worker")
    with pytest.raises(Skip, match="another worker"):
        busy(optuna.trial.FixedTrial(enc.params(other)))
    assert len(rec.calls) == 2
    assert Known(0, Measurement("ok", us=1.0)).measurement.score == 1.0


def test_encoding_orders_tile_sizes_and_round_trips():
    enc = Encoding(search_space(SPEC, 64).domains())
    best = KernelConfig(block_m=32, chunk=64, num_warps=8)
    assert enc.params(best) == {
        "strategy": "rowblock",
        "rowblock.block_m": 1,
        "rowblock.chunk": 1,
        "rowblock.num_warps": 2,
    }  # num_stages has one value: not a parameter
    assert enc.config(enc.params(best)) == best
    assert enc.params(TORCH) == {"strategy": "torch"} and enc.config({"strategy": "torch"}) == TORCH
    # persist's own fields; at bucket 64 its 128-row tiles are dominated
    assert enc.domains["persist"]["block_m"] == (32, 64)
    assert enc.params(PERSIST_BEST) == {
        "strategy": "persist",
        "persist.block_m": 0,
        "persist.block_n": 1,
        "persist.num_warps": 1,
    }  # block_k and num_stages have one value each: no parameters
    assert enc.config(enc.params(PERSIST_BEST)) == PERSIST_BEST
    near = enc.neighbours(PERSIST_BEST)
    assert {c.strategy for c in near} == {"persist"} and len(near) == 3  # at the edges
    assert KernelConfig("persist", block_m=32, block_n=64, num_warps=8, num_stages=3) in near


def round_trips(spec: MLPSpec) -> int:
    """Every candidate of every default bucket: config -> parameters -> the same config, and
    the sampler's suggestion from those parameters is that config too."""
    n = 0
    for b in DEFAULT_BUCKETS:
        space_ = search_space(spec, b)
        enc = Encoding(space_.domains())
        for c in space_.candidates:
            params = enc.params(c)
            assert enc.config(params) == c
            assert enc.suggest(optuna.trial.FixedTrial(params)) == c
            assert all(x.strategy == c.strategy and x != c for x in enc.neighbours(c))
            n += 1
    return n


def test_encoding_round_trips_every_candidate_of_the_table():
    assert round_trips(SPEC) > 0


def test_encoding_round_trips_every_field_of_the_production_table(production_table):
    """Every strategy of the production table and every KernelConfig field it searches."""
    strategies = set()
    for widths, act in [
        ((256, 512, 256), "gelu"),
        ((3, 5, 2), "gelu"),
        ((784, 1024, 1024, 10), "relu"),
        ((2048, 16), "gelu"),
    ]:
        spec = MLPSpec(widths, act=act)
        assert round_trips(spec) > 0
        # the H200's shared memory; clusters as on an sm_90 GPU
        spaces = [search_space(spec, b, 232448, clusters=True) for b in (64, 4096)]
        strategies |= {c.strategy for s in spaces for c in s.candidates}
    assert strategies == set(space.DOMAINS)


def storages(tmp_path):
    return {
        "sqlite": f"sqlite:///{tmp_path / 'studies.db'}",
        "journal": str(tmp_path / "studies.optuna.journal"),
    }


@pytest.mark.parametrize("kind", ["sqlite", "journal"])
def test_resume_after_an_interruption_repeats_no_finished_trial(tmp_path, kind):
    url = storages(tmp_path)[kind]
    first = Recorder(interrupt_at=6)
    with pytest.raises(KeyboardInterrupt):
        search(job((1, 64)), [first], url, quiet())
    finished = first.calls[:5]
    second = Recorder()
    results = search(job((1, 64)), [second], url, quiet())
    assert not set(finished) & set(second.calls)
    assert first.calls[5] in second.calls  # the interrupted one is measured again
    for b, r in results.items():
        assert r.measured == len(search_space(SPEC, b).candidates)
        assert r.winner == optimum(b)
    third = Recorder()
    search(job((1, 64)), [third], url, quiet())
    assert third.calls == []  # a finished study measures nothing more


def killed_search(url):
    """Run in a spawned process: tune until the 4th measurement, then die without cleanup."""
    use_table()
    calls = []

    def measure(bucket, config):
        calls.append(config)
        if len(calls) == 4:
            os._exit(9)
        return landscape(bucket, config)

    search(job((16,)), [measure], url, quiet())


@pytest.mark.parametrize("kind", ["sqlite", "journal"])
def test_resume_after_the_process_was_killed(tmp_path, kind):
    url = storages(tmp_path)[kind]
    proc = multiprocessing.get_context("spawn").Process(target=killed_search, args=(url,))
    proc.start()
    proc.join(120)
    assert proc.exitcode == 9
    rec = Recorder()
    results = search(job((16,)), [rec], url, quiet())
    n = len(search_space(SPEC, 16).candidates)
    assert len(rec.calls) == n - 3 and results[16].measured == n


def test_timeout_measures_every_bucket_before_searching_deeper():
    rec = Recorder(delay=0.05)
    t0 = time.perf_counter()
    results = search(job((64, 4096, 16384), timeout=1.0), [rec], memory(), quiet())
    assert time.perf_counter() - t0 < 5
    assert all(r.measured >= 1 for r in results.values())
    assert all(r.trials[0]["config"] == DEFAULT.to_dict() for r in results.values())
    assert sum(r.measured for r in results.values()) < sum(
        len(search_space(SPEC, b).candidates) for b in results
    )


@pytest.mark.parametrize("kind", ["sqlite", "journal"])
def test_two_workers_share_one_study_and_measure_nothing_twice(tmp_path, kind):
    url = storages(tmp_path)[kind]
    a, b = Recorder(delay=0.01), Recorder(delay=0.01)
    results = search(job((64, 4096)), [a, b], url, quiet())
    calls = a.calls + b.calls
    assert a.calls and b.calls and len(calls) == len(set(calls))
    for bucket, r in results.items():
        assert r.measured == len(search_space(SPEC, bucket).candidates)
        assert r.winner == optimum(bucket)


def fake_worker_measure(
    spec, bucket, config, workdir, seed, quick=False, give_up_us=None, verified=False
):
    """Runs in the measuring worker process: one candidate hangs, one kills the process."""
    if (config.strategy, config.chunk, config.num_warps) == ("rowblock", 32, 2):
        time.sleep(60)
    if (config.strategy, config.chunk, config.num_warps) == ("rowblock", 64, 2):
        os._exit(11)
    return landscape(bucket, config)


def test_search_through_a_worker_process_survives_hangs_and_crashes(tmp_path):
    measure = WorkerMeasure(SPEC, str(tmp_path), limit_s=2.0, fn=fake_worker_measure)
    try:
        results = search(job((1,)), [measure], memory(), quiet())
    finally:
        measure.close()
    r = results[1]
    verdicts = {json.dumps(t["config"], sort_keys=True): t["verdict"] for t in r.trials}
    hung = KernelConfig(block_m=16, chunk=32, num_warps=2).to_dict()
    died = KernelConfig(block_m=16, chunk=64, num_warps=2).to_dict()
    assert verdicts[json.dumps(hung, sort_keys=True)] == "timeout"
    assert verdicts[json.dumps(died, sort_keys=True)] == "crash"
    assert r.measured == len(search_space(SPEC, 1).candidates)
    assert r.winner[1].ok and r.winner[0].to_dict() not in (hung, died)


def test_the_winner_is_the_least_score_the_sampler_minimised():
    """One scalar: the winner is the verified candidate of least Measurement.score (the larger
    of GPU and host time plus HIDDEN_WEIGHT times the smaller), the number each trial reports
    to the sampler; an exact tie goes to the least GPU time."""
    a, b = (KernelConfig(block_m=16, chunk=x) for x in (32, 64))
    c = KernelConfig("persist", block_m=64, block_n=64, block_k=64, num_stages=3)
    d = KernelConfig(block_m=32, chunk=64)
    records = [
        (a, Measurement("ok", us=9.0, host_us=18.0)),
        (b, Measurement("ok", us=6.0, host_us=18.0)),  # the same host time, the GPU less busy
        (c, Measurement("ok", us=5.0, host_us=18.5)),  # 1 µs less GPU time for 0.5 more host
        (d, Measurement("ok", us=18.0, host_us=6.0)),  # an exact tie with b: more GPU time
        (TRAP, Measurement("wrong", "bad", us=0.1)),
    ]
    assert pick_winner(records)[0] == b
    assert pick_winner(records[2:])[0] == d
    assert pick_winner(records[4:]) is None
    space_ = search_space(SPEC, 64)
    enc = Encoding(space_.domains())
    fixed = {a: records[0][1], b: records[1][1]}
    objective = Objective(space_, lambda bucket, config: fixed[config], {})
    scores = {x: objective(optuna.trial.FixedTrial(enc.params(x))) for x in (a, b)}
    assert scores == {a: 18.0 + 9.0 * HIDDEN_WEIGHT, b: 18.0 + 6.0 * HIDDEN_WEIGHT}


def test_gpu_time_decides_between_host_bound_configs():
    """The 64-wide spec's re-tune on the H200 at 1024 rows: its recheck's host times per round
    (µs) of rowblock block_m 16 and block_m 64 (both linked by PDL) and the torch path, with
    their GPU times from the tune's measurements. Host time alone (medians 6.735 and 6.933)
    took block_m 16, which a later per-call comparison measured 38% slower than block_m 64;
    with GPU time in the score block_m 64 wins."""
    from mlpgen.decide import BucketResult, recheck

    m16, m64 = (
        KernelConfig("rowblock", block_m=b, chunk=64, num_warps=w, block_n=32, pdl=True)
        for b, w in ((16, 4), (64, 8))
    )
    host = {m16: [6.735, 6.687, 9.359], m64: [6.719, 6.933, 9.521], TORCH: [111.0, 179.3, 176.2]}
    gpu = {m16: 4.748, m64: 3.52, TORCH: 27.8}
    rounds = {c: iter(hs) for c, hs in host.items()}

    def measure(bucket, c):
        return Measurement("ok", us=gpu[c], host_us=next(rounds[c]), err=1e-3, spread=0.01)

    search = {c: Measurement("ok", us=gpu[c], host_us=min(host[c]), err=1e-3) for c in host}
    pairs = list(search.items())
    r = BucketResult(1024, None, None, None, None, [], len(pairs), pairs=pairs)
    recheck(r, measure, 2)  # host-bound: three re-measurements each decide
    medians = {json.dumps(e["config"], sort_keys=True): e["median"] for e in r.recheck}
    assert r.winner[0] == m64 and medians[json.dumps(m64.to_dict(), sort_keys=True)] == 7.637
    assert statistics.median(host[m16]) < statistics.median(host[m64])  # host time alone: 16


def test_tune_writes_winners_provenance_and_trial_log_and_merges_gpus(tmp_path):
    path = write_module(tmp_path / f"{SPEC.name}.py", SPEC)
    summary = tune(path, job((1, 64, 4096)), [Recorder()], memory(), progress=quiet())
    assert json.loads(json.dumps(summary))["buckets"]["64"]["winner"]["us"] == 9.0
    tune(path, job((1, 64), key=KEY_B), [Recorder()], memory(), progress=quiet())
    _, tuned, prov = read_module(path)
    assert set(tuned) == {"default", KEY_A, KEY_B}
    assert sorted(tuned[KEY_A]) == [1, 64, 4096] and sorted(tuned[KEY_B]) == [1, 64]
    cell = tuned[KEY_A][64]
    assert KernelConfig.from_dict(cell) == optimum(64)[0] == PERSIST_BEST
    assert cell["us"] == 9.0 and cell["host_us"] == 12.0
    assert cell["eager_us"] == 20.0 and cell["eager_host_us"] == 60.0
    assert "host_us" not in tuned[KEY_A][4096]
    for key in ("torch", "triton", "mlpgen", "seed", "trials", "tuning_seconds", "date"):
        assert key in prov[KEY_A]
    assert prov[KEY_A]["command"].startswith("mlpgen --widths ")  # a search from nothing
    log = json.loads(trial_log_path(path).read_text())
    assert set(log["gpus"]) == {KEY_A, KEY_B}
    b64 = log["gpus"][KEY_A]["buckets"]["64"]
    assert b64["measured"] == b64["candidates"] == len(b64["trials"])
    assert b64["dropped"] == sum(b64["dropped_by"].values()) > 0
    # retuning one bucket keeps this GPU's other buckets
    slower = Recorder(fn=lambda b, c: landscape(b, c) if c != optimum(64)[0] else landscape(1, c))
    earlier = {64: tuned[KEY_A][64]}
    tune(path, job((64,), exhaustive=True, previous=earlier), [slower], memory(), progress=quiet())
    _, tuned, prov = read_module(path)
    assert prov[KEY_A]["seeded"] == 1  # its earlier winner measured first: a retune
    assert prov[KEY_A]["command"] == f"mlpgen retune {SPEC.name}.py --batches 64 --exhaustive " + (
        "--seed 0 --workers 1"
    )
    assert sorted(tuned[KEY_A]) == [1, 64, 4096] and set(tuned) == {"default", KEY_A, KEY_B}
    assert sorted(read_module(path)[1]["default"]) == [
        1,
        16,
        64,
        256,
        1024,
        4096,
        16384,
        65536,
        262144,
    ]
    mod = load_module(path)
    assert mod.TUNED[KEY_B][1]["kernel"] in mod.KERNELS


def test_a_bucket_where_everything_fails_keeps_its_old_entry(tmp_path):
    path = write_module(tmp_path / f"{SPEC.name}.py", SPEC)
    tune(path, job((1, 64)), [Recorder()], memory(), progress=quiet())
    before = read_module(path)[1][KEY_A][1]

    def nothing_works_at_1(bucket, config):
        return Measurement("error", "boom") if bucket == 1 else landscape(bucket, config)

    summary = tune(path, job((1, 64)), [nothing_works_at_1], memory(), progress=quiet())
    assert summary["buckets"]["1"]["winner"] is None
    assert read_module(path)[1][KEY_A][1] == before


def write_in_a_loop(path, key):
    """Run in a spawned process: tune twice for `key` into the shared module."""
    use_table()
    for _ in range(2):
        tune(path, job((1, 64), key=key, trials=3), [landscape], memory(), progress=quiet())


def test_two_concurrent_writer_processes_leave_a_valid_module(tmp_path):
    path = write_module(tmp_path / f"{SPEC.name}.py", SPEC)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=write_in_a_loop, args=(path, k)) for k in (KEY_A, KEY_B)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(180)
        assert p.exitcode == 0
    _, tuned, prov = read_module(path)
    assert set(tuned) == {"default", KEY_A, KEY_B} and set(prov) == {KEY_A, KEY_B}
    assert set(json.loads(trial_log_path(path).read_text())["gpus"]) == {KEY_A, KEY_B}
    assert set(load_module(path).TUNED) == set(tuned)
    assert not list(tmp_path.glob(".*.tmp"))


def test_progress_line_only_on_a_terminal():
    tty = io.StringIO()
    p = Progress(10, stream=tty, enabled=True)
    p.update(64, True, 12.5)
    p.update(64, False, None)
    p.close()
    assert "1/10" in tty.getvalue() and "12.50 us" in tty.getvalue() and "\r" in tty.getvalue()
    pipe = io.StringIO()
    p = Progress(10, stream=pipe)  # StringIO is not a TTY
    p.update(64, True, 12.5)
    p.close()
    assert pipe.getvalue() == ""


@pytest.mark.interpret
def test_tune_module_glue_on_the_cpu(tmp_path, monkeypatch, production_table):
    """tune_module end to end with a pretend GPU (and, with --train, the train search after it:
    train_tune.tune_with_training): compile workers and measuring workers run the real kernels
    of the production table through Triton's interpreter (they inherit TRITON_INTERPRET=1)."""
    import torch

    props = SimpleNamespace(
        name="Pretend GPU",
        major=9,
        minor=0,
        multi_processor_count=4,
        shared_memory_per_block_optin=227 * 1024,
    )
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda d=None: props)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: props.name)
    monkeypatch.setenv("MLPGEN_NATIVE", "0")  # no kernel lane opens on the CPU: nothing to build
    from mlpgen.train_tune import tune_with_training

    spec = MLPSpec((8, 16, 4), act="relu", dtype="fp32")
    path = write_module(tmp_path / f"{spec.name}.py", spec)
    opts = TuneOptions(buckets=(1, 64), trials=3, workers=2, train=True)
    summary = tune_with_training(path, opts)
    key = "Pretend GPU|sm90|4"
    assert summary["gpu"] == key and summary["compile_errors"] == 0
    assert (tmp_path / f"{spec.name}.optuna.journal").exists()
    _, tuned, prov = read_module(path)
    assert sorted(tuned[key]) == [1, 64] and prov[key]["gpu"] == "Pretend GPU"
    assert all(cell["us"] > 0 for cell in tuned[key].values())
    assert json.loads(json.dumps(summary))["buckets"]["64"]["measured"] == 3
    # --train: the train search ran after it in its own worker and wrote every bucket's winner
    train = json.loads(json.dumps(summary["train"]))
    assert train["measured"] == 6
    assert all(tuned[key][b]["train"] == train["buckets"][str(b)]["train"] for b in (1, 64))
    assert " --train" in prov[key]["command"]
    phases = summary["phase_seconds"]
    assert list(phases) == ["setup", "search", "decide", "close"]
    assert sum(phases.values()) <= summary["total_seconds"] + 0.5
    # a re-tune of the forward keeps the training steps and the train search's provenance
    tune_with_training(path, dataclasses.replace(opts, train=False, workers=1))
    _, again, prov = read_module(path)
    assert all(again[key][b]["train"] == tuned[key][b]["train"] for b in (1, 64))
    assert prov[key]["command"].startswith(f"mlpgen retune {spec.name}.py ")
    assert " --train" in prov[key]["command"] and prov[key]["seeded"] == 2


def test_an_unbuildable_native_lane_is_not_tried_by_the_workers(tmp_path, monkeypatch):
    """tune_module builds the native lane before the workers time anything; where that fails,
    the workers (spawned: they inherit the environment) are told not to try again."""
    import os

    import triton

    from mlpgen.runtime import native
    from mlpgen.tune import build_native_lane

    monkeypatch.setattr(triton, "__version__", "3.6.0")  # a triton the native lane supports
    monkeypatch.setattr(native, "_BUILT", {})
    monkeypatch.setenv("MLPGEN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MLPGEN_NATIVE", "1")  # restored after the test, whatever the tuner sets
    monkeypatch.setenv("CXX", "false")
    with pytest.warns(UserWarning, match="native lane could not be built"):
        assert build_native_lane(SPEC, str(tmp_path)) is False
    assert os.environ["MLPGEN_NATIVE"] == "0"


def test_compare_a_budgeted_search_with_an_exhaustive_one(tmp_path, capsys):
    from mlpgen.trials import compare, main

    (tmp_path / "full").mkdir()
    full = write_module(tmp_path / "full" / f"{SPEC.name}.py", SPEC)
    part = write_module(tmp_path / f"{SPEC.name}.py", SPEC)
    tune(full, job((64, 16384), exhaustive=True), [landscape], memory(), progress=quiet())
    tune(part, job((64, 16384), trials=6), [landscape], memory(), progress=quiet())
    rows = compare(trial_log_path(full), trial_log_path(part), {16384})
    [row] = rows
    assert row["bucket"] == 16384 and row["search_measured"] == 6
    assert row["share"] == round(6 / len(search_space(SPEC, 16384).candidates), 3) <= 0.3
    assert row["ratio"] >= 1.0 and row["exhaustive_score"] == optimum(16384)[1].score
    assert main(["compare", str(trial_log_path(full)), str(trial_log_path(part))]) == 0
    assert "bucket     64" in capsys.readouterr().out


def test_only_the_default_the_previous_winners_and_torch_are_seeded(production_table):
    """No seed is fitted to a GPU's measurements: a bucket's first candidates are the heuristic
    default, this GPU's previous winners and the torch path, nothing else."""
    from dataclasses import replace

    from mlpgen.strategies import STRATEGIES

    assert not any(hasattr(s, "seeds") for s in STRATEGIES.values())
    h200 = 232448  # opt-in shared memory per block
    for b in (1, 64, 1024, 16384):
        [bucket] = plan(replace(job((b,), trials=6), max_shared=h200, clusters=True))
        default = space.heuristic_config(SPEC, b)
        assert bucket.first == list(dict.fromkeys([default, TORCH]))


def test_a_separate_cuda_graph_winner_when_gpu_time_and_score_disagree(tmp_path):
    """At a host-bound bucket the winner is chosen on host time; the least GPU time (what a
    CUDA-graph replay costs) is stored beside it when it is more than GRAPH_TIE faster."""
    from mlpgen.decide import BucketResult, pick_graph_winner
    from mlpgen.emit import graph_cell
    from mlpgen.tune import winners_table

    cheap = KernelConfig("stream", block_m=16, block_n=64, chunk=64, num_stages=3)
    fast = KernelConfig("persist", block_m=16, block_n=16, block_k=128, num_warps=2)
    records = [
        (cheap, Measurement("ok", us=11.7, host_us=15.0)),
        (fast, Measurement("ok", us=4.1, host_us=28.0)),  # host-bound: outside the tie
        (TORCH, Measurement("ok", us=8.3, host_us=40.0)),
    ]
    winner = pick_winner(records)
    assert winner[0] == cheap
    graph = pick_graph_winner(records, winner)
    assert graph[0] == fast
    assert pick_graph_winner(records[:1] + [(fast, Measurement("ok", us=11.2))], winner) is None
    # 11.7 against 11.0: 6% more GPU time than the fastest, past GRAPH_TIE's 5%
    assert pick_graph_winner(records[:1] + [(fast, Measurement("ok", us=11.0))], winner)
    result = BucketResult(64, None, winner, records[2][1], graph, [], 3)
    [cell] = winners_table({64: result}).values()
    assert KernelConfig.from_dict(cell) == cheap and cell["us"] == 11.7
    assert KernelConfig.from_dict(graph_cell(cell)) == fast and graph_cell(cell)["us"] == 4.1
    assert graph_cell(winners_table({64: dataclasses.replace(result, graph=None)})[64]) is None


def linked(gain):
    """landscape, with rowblock's GPU time times `gain` where its first kernel launches with PDL."""

    def fn(bucket, c):
        m = landscape(bucket, dataclasses.replace(c, pdl=False))
        if c.pdl and m.ok and c.strategy == "rowblock":
            return dataclasses.replace(m, us=m.us * gain)
        return m

    return fn


@pytest.mark.parametrize("gain", [0.8, 1 - PDL_GAIN / 2])
def test_pdl_is_tried_on_the_fastest_configs_and_kept_where_it_gains(gain):
    """Once the search is done, PDL is measured on each bucket's fastest kernel configs and its
    winner (recorded as trials of state "pdl"); a variant that saves PDL_GAIN of its config's
    GPU time joins the records and can win, a smaller saving is noise and cannot."""
    rec = Recorder(linked(gain))
    results = search(dataclasses.replace(job((1, 4096)), pdl=True), [rec], memory(), quiet())
    for r in results.values():
        base = {c: m for c, m in r.pairs if not c.pdl}
        tried = [KernelConfig.from_dict(t["config"]) for t in r.trials if t["state"] == "pdl"]
        assert 1 <= len(tried) <= PDL_TOP + 1 and all(c.pdl for c in tried)
        assert all(dataclasses.replace(c, pdl=False) in base for c in tried)
        kernels = {c: m.us for c, m in base.items() if m.ok and c.has_kernel}
        cut = sorted(kernels.values())[PDL_TOP - 1]  # the PDL_TOP fastest: every one under it
        unlinked = {dataclasses.replace(c, pdl=False) for c in tried}
        assert {c for c, us in kernels.items() if us < cut} <= unlinked
        assert r.graph is None or not r.graph[0].pdl  # replays of a graph do not overlap
        if gain < 1 - PDL_GAIN:
            assert any(c.pdl for c, _ in r.pairs)
        else:
            assert not r.winner[0].pdl and not any(c.pdl for c, _ in r.pairs)
    assert sum(c.pdl for _, c in rec.calls) == sum(
        t["state"] == "pdl" for r in results.values() for t in r.trials
    )
    config, m = results[1].winner  # rowblock wins one row (host-bound: GPU time decides)
    assert config.strategy == "rowblock" and config.pdl == (gain < 1 - PDL_GAIN)
    if config.pdl:
        assert m.us == pytest.approx(gain * landscape(1, dataclasses.replace(config, pdl=False)).us)


def test_a_buckets_pdl_variants_are_measured_while_other_buckets_are_searched():
    """A bucket done searching has its PDL variants handed to the compiler and measured at
    once: the small bucket's budget ends first, and its variants are measured while the larger
    bucket still has measurements of its search to make. The decision replays them from the
    study: each variant is measured once."""
    rec = Recorder(linked(0.8))
    handed = []
    rec.prefetch = lambda configs: handed.append((len(rec.calls), list(configs)))
    jobs = dataclasses.replace(job((1, 4096), trials=None), pdl=True)
    results = search(jobs, [rec], memory(), quiet())
    tried_at_1 = {
        KernelConfig.from_dict(t["config"]) for t in results[1].trials if t["state"] == "pdl"
    }
    assert tried_at_1
    calls = list(rec.calls)
    last_search_at_4096 = max(i for i, (b, c) in enumerate(calls) if b == 4096 and not c.pdl)
    firsts = [i for i, (b, c) in enumerate(calls) if b == 1 and c in tried_at_1]
    assert len(firsts) == len(tried_at_1)  # measured once: the decision replays them
    assert max(firsts) < last_search_at_4096
    handed_at = {c: n for n, configs in reversed(handed) for c in configs}
    assert all(handed_at[c] <= i for i, (_, c) in enumerate(calls) if c in tried_at_1)


def test_two_drivers_measure_each_pdl_variant_once():
    """Each driver that finds a bucket done offers its PDL pass; one takes it (a claim) and
    the decision replays what it measured: no PDL variant is measured twice."""
    fast = linked(0.8)

    def slow_pdl(bucket, config):  # the other driver finds the bucket done mid-pass
        if config.pdl:
            time.sleep(0.05)
        return fast(bucket, config)

    rec = Recorder(slow_pdl)
    jobs = dataclasses.replace(job((1, 64, 4096), trials=12), pdl=True)
    results = search(jobs, [rec, rec], memory(), quiet())
    linked_calls = [(b, c) for b, c in rec.calls if c.pdl]
    assert linked_calls and len(linked_calls) == len(set(linked_calls))
    recorded = [t for r in results.values() for t in r.trials if t["state"] == "pdl"]
    assert len(recorded) == len(linked_calls)


def test_pdl_is_not_tried_without_it():
    """A GPU without PDL (Job.pdl False, as tune_module sets it before sm_90): no PDL trial."""
    rec = Recorder(linked(0.5))
    results = search(job((1,)), [rec], memory(), quiet())
    assert not any(c.pdl for _, c in rec.calls)
    assert not any(t["state"] == "pdl" for t in results[1].trials)


def test_pdl_is_tried_on_a_previous_winner_that_ran_with_it():
    """A previous winner that ran with PDL is tried linked again whatever its rank without PDL
    (a re-tune that ranks it fifth unlinked would otherwise never try it linked). Here
    it is the space's slowest kernel config unlinked and the fastest by far linked: it wins."""
    kernels = [c for c in search_space(SPEC, 1).candidates if c.has_kernel and landscape(1, c).ok]
    slow = max(kernels, key=lambda c: landscape(1, c).us)
    fast_linked = dataclasses.replace(slow, pdl=True)

    def fn(bucket, c):
        m = landscape(bucket, dataclasses.replace(c, pdl=False))
        return dataclasses.replace(m, us=m.us * 0.1) if c == fast_linked else m

    rec = Recorder(fn)
    previous = {1: entry(fast_linked, us=1.0)}
    tuned = dataclasses.replace(job((1,), trials=8, previous=previous), pdl=True)
    r = search(tuned, [rec], memory(), quiet())[1]
    assert r.plan.linked == (slow,)
    unlinked = {c: m.us for c, m in r.pairs if not c.pdl and m.ok and c.has_kernel}
    assert sum(us < unlinked[slow] for us in unlinked.values()) >= PDL_TOP  # not among the top
    assert (1, fast_linked) in rec.calls
    assert r.winner[0] == fast_linked


def test_pdl_measurements_are_replayed_when_a_run_resumes():
    """A second run on the same storage measures no PDL variant again: the pass's measurements
    live in the study, so the resumed run picks the same winners."""
    storage = memory()
    first = Recorder(linked(0.8))
    a = search(dataclasses.replace(job((1,)), pdl=True), [first], storage, quiet())
    assert any(c.pdl for _, c in first.calls)
    again = Recorder(linked(0.8))
    b = search(dataclasses.replace(job((1,)), pdl=True), [again], storage, quiet())
    assert not any(c.pdl for _, c in again.calls)
    assert b[1].winner == a[1].winner and b[1].winner[0].pdl


def test_pdl_is_not_tried_where_no_kernel_waits():
    """The torch path launches no Triton kernel that could wait for the previous one
    (KernelConfig.takes_pdl): PDL is not tried on it even where it is the fastest, and is on
    the kernel configs."""

    def fn(bucket, c):
        plain = dataclasses.replace(c, pdl=False)
        if c.strategy == "torch":  # persist's landscape, 20x faster: the fastest by far
            m = landscape(bucket, KernelConfig("persist", block_m=64, num_stages=3))
            m = dataclasses.replace(m, us=m.us * 0.05)
        else:
            m = landscape(bucket, plain)
        return dataclasses.replace(m, us=m.us * 0.5) if c.pdl and m.ok else m  # linked: half

    rec = Recorder(fn)
    r = search(dataclasses.replace(job((4096,), trials=16), pdl=True), [rec], memory(), quiet())
    plain = [c for _, c in rec.calls if c.strategy == "torch"]
    assert plain and not any(c.pdl for c in plain)
    assert r[4096].winner[0].strategy == "torch" and not r[4096].winner[0].pdl
    linked = [KernelConfig.from_dict(t["config"]) for t in r[4096].trials if t["state"] == "pdl"]
    assert linked and all(c.takes_pdl for c in linked)  # the pass ran, on the other kernels


# ---------------------------------------------------------------------------------------------
# Noise: the best few re-measured, medians decide, a kernel must beat torch beyond the noise


class Noisy:
    """landscape, except that `lucky` measured 30% fast once (its first measurement) and the
    torch path took `torch_us` (its host time too, where the bucket has one)."""

    def __init__(self, lucky=None, torch_us=None):
        self.lucky, self.torch_us, self.calls = lucky, torch_us, []

    def __call__(self, bucket, c):
        self.calls.append(c)
        m = landscape(bucket, c)
        if c == self.lucky and self.calls.count(c) == 1:
            return dataclasses.replace(m, us=m.us * 0.7)
        if c == TORCH and self.torch_us is not None:
            host = None if m.host_us is None else self.torch_us
            return dataclasses.replace(m, us=self.torch_us, host_us=host)
        return m


def test_the_best_few_are_remeasured_interleaved_and_medians_decide():
    """A config measured 30% fast once (noise) leads the search but not the re-measurement:
    RECHECK_TOP best and the torch path are measured RECHECK_ROUNDS more times, round after
    round, and the medians pick the true optimum; the samples and their spread are recorded."""
    from mlpgen.decide import RECHECK_ROUNDS, RECHECK_TOP

    b = 16384
    lucky = KernelConfig("persist", block_m=64, block_n=128, num_warps=8, num_stages=3)
    noisy = Noisy(lucky)
    r = search(job((b,), exhaustive=True, recheck=RECHECK_ROUNDS), [noisy], memory(), quiet())[b]
    searched = noisy.calls[: r.measured]
    rechecked = noisy.calls[r.measured :]
    assert pick_winner([(c, m) for c, m in r.pairs])[0] == lucky  # the search's own pick
    assert r.winner[0] == PERSIST_BEST and r.winner[1].us == landscape(b, PERSIST_BEST).us
    group = rechecked[: RECHECK_TOP + 1]  # interleaved: one round is each of them once
    assert len(rechecked) == RECHECK_ROUNDS * len(group) and TORCH in group
    assert rechecked == group * RECHECK_ROUNDS and {lucky, PERSIST_BEST} <= set(group)
    assert len(searched) == len(set(searched))
    lucky_row = next(x for x in r.recheck if x["config"] == lucky.to_dict())
    assert len(lucky_row["scores"]) == RECHECK_ROUNDS + 1
    assert lucky_row["median"] == pytest.approx(landscape(b, lucky).score, abs=1e-3)
    # the one fast sample is an outlier: the spread is the median deviation, the timings' own
    assert lucky_row["spread"] == pytest.approx(landscape(b, lucky).spread or 0.0, abs=1e-4)


@pytest.mark.parametrize("torch_us,kernel_wins", [(9.1, False), (9.0 * 1.05, True)])
def test_a_kernel_wins_only_beyond_the_noise_of_the_torch_path(torch_us, kernel_wins):
    """At 4096 rows the best kernel takes 36 us: against a torch path of 36.4 us (1% slower,
    within NOISE) the torch path wins; against one 5% slower, the kernel. Scaled: the landscape
    multiplies times by 4 at 4096 rows."""
    b = 4096
    noisy = Noisy(torch_us=torch_us * 4)
    r = search(job((b,), exhaustive=True, recheck=1), [noisy], memory(), quiet())[b]
    assert (r.winner[0] != TORCH) == kernel_wins
    assert r.eager.us == torch_us * 4
    if not kernel_wins:
        assert r.winner[1].us == torch_us * 4 < 1.02 * landscape(b, PERSIST_BEST).us


def test_never_slower_uses_the_measured_spread():
    from mlpgen.decide import never_slower

    kernel = (PERSIST_BEST, Measurement("ok", us=9.0, spread=0.01))
    torch_ = (TORCH, Measurement("ok", us=9.5, spread=0.01))
    assert never_slower(kernel, torch_) == kernel  # 5.5% faster, spreads of 1%
    noisy = (TORCH, Measurement("ok", us=9.5, spread=0.08))
    assert never_slower(kernel, noisy) == noisy  # 5.5% is within its 8% spread
    assert never_slower(kernel, None) == kernel and never_slower(None, torch_) is None
    # a host-bound training step (recorded on the H200, 1024,4096,1024 at 1024 rows): the
    # kernels' host time is lower by the host's noise, their GPU time twice the torch path's
    steps = (PERSIST_BEST, Measurement("ok", us=384.3, host_us=872.5, spread=0.01))
    eager_step = (TORCH, Measurement("ok", us=177.3, host_us=976.4, spread=0.01))
    assert steps[1].score * 1.02 < eager_step[1].score  # the score alone would take the kernels
    assert never_slower(steps, eager_step) == eager_step


def test_one_disturbed_sample_does_not_hand_a_bucket_to_the_torch_path():
    """Recorded on the H200: the torch path's rechecks of 3245, 39.9 and 39.3 µs against a
    kernel's 7.37, 7.35, 7.37. The outlier moves neither median nor spread, so the kernel,
    5x faster, wins; so does a kernel against a torch path whose one timing was disturbed."""
    from mlpgen.decide import median_measurement, never_slower

    def med(scores, spreads=(0.01, 0.01, 0.01)):
        return median_measurement(
            [Measurement("ok", us=u, spread=s) for u, s in zip(scores, spreads)]
        )

    kernel = (PERSIST_BEST, med([7.368, 7.345, 7.37]))
    torch_ = (TORCH, med([3245.184, 39.918, 39.315]))
    assert torch_[1].spread < 0.02 and never_slower(kernel, torch_) == kernel
    disturbed = (TORCH, med([43.4, 39.8, 39.8], spreads=(1.42, 0.01, 0.02)))
    assert disturbed[1].spread < 0.1 and never_slower(kernel, disturbed) == kernel
    close = (TORCH, med([7.5, 7.45, 7.52]))  # within 2% of the kernel: no gain
    assert never_slower(kernel, close) == close


def test_a_host_bound_recheck_remeasures_the_best_of_each_strategy():
    """Small batches are host-bound, and the host drifts: three rowblock variants measured
    early at 8.5 µs (11 when re-measured) rank above the best persist's 10.4 µs measured later.
    Re-measuring only the top three would crown a rowblock; the best of each strategy (linked
    by PDL too) is re-measured as well, interleaved, and persist wins on medians. Where GPU time
    sets the score the recheck stays the top three and the torch path."""
    from mlpgen.decide import RECHECK_TOP, BucketResult, recheck

    rows = [KernelConfig("rowblock", block_m=b, chunk=64, num_warps=8) for b in (16, 32, 64)]
    best = dataclasses.replace(PERSIST_BEST, pdl=True)
    early = Measurement("ok", us=5.0, host_us=8.5, err=1e-3)
    pairs = [(c, early) for c in rows] + [(best, Measurement("ok", us=4.0, host_us=10.4))]
    pairs += [(TORCH, Measurement("ok", us=20.0, host_us=60.0))]
    truth = {c: 11.0 for c in rows} | {best: 10.4, TORCH: 60.0}
    measured = []

    def measure(bucket, c):
        measured.append(c)
        return Measurement("ok", us=4.0, host_us=truth[c], err=1e-3)

    r = BucketResult(64, None, None, None, None, [], len(pairs), pairs=list(pairs))
    recheck(r, measure, 2)
    assert set(measured) == {*rows, best, TORCH} and r.winner[0] == best
    assert len(measured) == 3 * 5  # host-bound: three rounds, the search's sample left out

    gpu_bound = [(c, Measurement("ok", us=m.host_us, host_us=None)) for c, m in pairs]
    measured.clear()
    r = BucketResult(65536, None, None, None, None, [], len(pairs), pairs=gpu_bound)
    recheck(r, lambda b, c: measure(b, c) and Measurement("ok", us=truth[c]), 2)
    assert len(set(measured)) == RECHECK_TOP + 1 and best not in measured


def test_a_host_bound_recheck_takes_each_strategys_kernel_of_least_gpu_time():
    """At a host-bound bucket every kernel's host time is its launch path's, give or take the
    noise of the moment it was measured: the search ranked a slow cluster kernel (8 µs on the
    GPU) above a fast one (3 µs) by 1.1 µs of host time taken while kernels compiled beside it.
    The recheck re-measures each strategy's kernel of least GPU time, on fresh samples only
    (the search's contended ones are left out), and the fast one wins."""
    from mlpgen.decide import BucketResult, recheck

    split = [KernelConfig("split", block_m=16, chunk=c, block_n=128) for c in (32, 64, 128)]
    slow, fast = (KernelConfig("cluster", block_m=b, chunk=32, block_n=32) for b in (16, 1))
    search = {c: Measurement("ok", us=5.5, host_us=8.0 + i / 10) for i, c in enumerate(split)}
    search |= {slow: Measurement("ok", us=8.0, host_us=8.1), fast: Measurement("ok", us=3.0,
               host_us=9.2), TORCH: Measurement("ok", us=10.0, host_us=60.0)}  # fmt: skip
    quiet_host = {c: 6.0 for c in search} | {TORCH: 40.0}

    def measure(bucket, c):
        return Measurement("ok", us=search[c].us, host_us=quiet_host[c])

    r = BucketResult(1, None, None, None, None, [], len(search), pairs=list(search.items()))
    recheck(r, measure, 2)
    scores = {json.dumps(e["config"], sort_keys=True): e["scores"] for e in r.recheck}
    assert r.winner[0] == fast and json.dumps(slow.to_dict(), sort_keys=True) not in scores
    assert all(len(s) == 3 and max(s) < 48.0 for s in scores.values())  # no search sample


def test_a_trial_asked_ahead_is_suggested_once_more_only_to_be_measured(monkeypatch):
    """A config asked ahead is looked up, not suggested again, whenever the driver lists what
    is pending (each suggestion reads the trial from the storage): two suggestions a trial at
    most, one when it is asked and one when it is measured."""
    calls = []
    real = Encoding.suggest
    monkeypatch.setattr(Encoding, "suggest", lambda self, t: calls.append(t) or real(self, t))
    results = search(job((64, 4096), trials=24, lookahead=3), [Recorder()], memory(), quiet())
    trials = sum(len(r.trials) for r in results.values())
    assert trials >= 40 and len(calls) <= 2 * trials


def test_a_rechecked_torch_path_reports_the_median_eager_time():
    """The eager reference a TUNED cell carries is the median of nn.Sequential's samples, not
    the first (quick) one."""
    from mlpgen.decide import median_measurement

    ms = [
        Measurement("ok", us=u, host_us=h, seq_us=s, seq_host_us=sh)
        for u, h, s, sh in [
            (9.0, 30.0, 20.0, 50.0),
            (8.0, 31.0, 12.0, 44.0),
            (9.5, 29.0, 11.0, 40.0),
        ]
    ]
    med = median_measurement(ms)
    assert (med.us, med.host_us, med.seq_us, med.seq_host_us) == (9.0, 30.0, 12.0, 44.0)
    assert med.eager_times() == {"eager_us": 12.0, "eager_host_us": 44.0}


# ---------------------------------------------------------------------------------------------
# Cold tunes: compile only what is measured, cap a bucket's time, progress per bucket


class Compiling(Recorder):
    """A measure with a compiler in front (workers.WorkerMeasure's interface): prefetch queues
    kernels, a measurement compiles its own first if it was not prefetched."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.compiled: list[KernelConfig] = []
        self.events: list[tuple[str, KernelConfig]] = []  # ("prefetch" | "measure", config)

    def prefetch(self, configs):
        new = [c for c in configs if c not in self.compiled]
        self.compiled += new
        self.events += [("prefetch", c) for c in new]

    def __call__(self, bucket, config):
        if config.has_kernel and config not in self.compiled:
            self.compiled.append(config)
        self.events.append(("measure", config))
        return super().__call__(bucket, config)


def test_only_kernels_that_are_measured_are_compiled():
    rec = Compiling()
    results = search(job((64, 4096, 16384), trials=8), [rec], memory(), quiet())
    measured = {c for _, c in rec.calls}
    space_ = set().union(*(search_space(SPEC, b).candidates for b in results))
    assert set(rec.compiled) <= measured and len(rec.compiled) < len(space_) / 2
    # the firsts of every bucket are handed over before anything is measured
    assert rec.compiled[0] == DEFAULT


def test_kernels_are_handed_to_the_compiler_ahead_of_their_measurement():
    """Each bucket's next trial is asked right after its last measurement, so its kernel
    compiles while the other buckets are measured: nearly every measured kernel was handed to
    the compiler at least one measurement before its own."""
    rec = Compiling()
    search(job((64, 4096, 16384), trials=12), [rec], memory(), quiet())
    ahead = on_demand = 0
    for i, (what, config) in enumerate(rec.events):
        if what != "measure" or not config.has_kernel:
            continue
        handed = (
            rec.events.index(("prefetch", config))
            if ("prefetch", config) in rec.events[:i]
            else None
        )
        between = handed is not None and any(w == "measure" for w, _ in rec.events[handed:i])
        ahead += between
        on_demand += not between
    assert ahead >= 0.9 * (ahead + on_demand), (ahead, on_demand)


def test_the_search_and_the_decision_report_their_seconds():
    """Results.seconds splits the wall time: the drivers' search, then the decision (PDL,
    re-measurement, consolidation, writing) with its own measurements."""
    from mlpgen.decide import RECHECK_ROUNDS, RECHECK_TOP

    rec = Recorder(delay=0.05)
    results = search(job((4096,), trials=6, recheck=RECHECK_ROUNDS), [rec], memory(), quiet())
    seconds = results.seconds  # rounded to 0.1 s
    rechecks = len(rec.calls) - results[4096].measured
    assert rechecks >= RECHECK_ROUNDS * RECHECK_TOP
    assert seconds["search"] >= 6 * 0.05 - 0.05 and seconds["decide"] >= rechecks * 0.05 - 0.05


@pytest.mark.parametrize("hold_s", [30.0, 0.0])
def test_a_bucket_whose_kernel_is_compiling_is_passed_over_for_a_while(monkeypatch, hold_s):
    """With a measure that says which kernels are compiled (`ready`), the buckets whose next
    kernel is ready are measured first; one still compiling waits at most HOLD_S seconds (at
    0 the round-robin order is kept), and every bucket still gets its budget measured."""
    monkeypatch.setattr("mlpgen.tune.HOLD_S", hold_s)
    rec = Recorder()
    # the default's kernel compiles until the third measurement (the torch path has none)
    rec.ready = lambda c: c != DEFAULT or len(rec.calls) >= 3
    results = search(job((64, 4096), trials=6), [rec], memory(), quiet())
    assert all(r.measured == 6 for r in results.values())
    order = [b for b, _ in rec.calls[:3]]
    assert order == ([64, 64, 64] if hold_s else [64, 4096, 64]), rec.calls[:3]


def test_a_bucket_time_cap_stops_its_search():
    rec = Recorder(delay=0.05)
    r = search(job((4096,), trials=30, bucket_timeout=0.3), [rec], memory(), quiet())[4096]
    assert 1 <= r.measured <= 8 and r.winner is not None


def test_a_progress_line_per_bucket():
    pipe = io.StringIO()
    search(job((64, 4096), trials=5), [Recorder()], memory(), Progress(10, stream=pipe))
    lines = pipe.getvalue().splitlines()
    assert len(lines) == 2 and all("5/5 trials, best" in line for line in lines)
    assert "bucket     64" in lines[0] and "persist" in lines[1]
    quiet_ = io.StringIO()
    search(job((64,), trials=5), [Recorder()], memory(), Progress(5, stream=quiet_, quiet=True))
    assert quiet_.getvalue() == ""


# ---------------------------------------------------------------------------------------------
# Shared studies: several processes on one storage


def shared_worker(path, url, log, delay, barrier=None):
    """Run in a spawned process: tune the module against the shared storage, each measurement
    appended to `log` (one line per call, so both processes' calls are seen together); with a
    barrier, once every process sharing it is ready."""
    use_table()
    if barrier is not None:
        barrier.wait(120)

    def measure(bucket, config):
        with open(log, "a") as f:
            f.write(json.dumps([bucket, config.to_dict(), os.getpid()]) + "\n")
        time.sleep(delay)
        return landscape(bucket, config)

    summary = tune(path, job((1, 64, 4096), trials=10), [measure], url, progress=quiet())
    with open(f"{log}.{os.getpid()}", "w") as f:
        json.dump(summary["written"], f)


def test_two_processes_share_one_study_measure_nothing_twice_and_write_once(tmp_path):
    path = write_module(tmp_path / f"{SPEC.name}.py", SPEC)
    url, log = str(tmp_path / "shared.optuna.journal"), str(tmp_path / "calls")
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Barrier(2)  # both search at once: neither finds the study decided already
    procs = [ctx.Process(target=shared_worker, args=(path, url, log, 0.1, ready)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
        assert p.exitcode == 0
    rows = [json.loads(line) for line in open(log)]
    calls = [(b, json.dumps(c, sort_keys=True)) for b, c, _ in rows]
    assert len(calls) == len(set(calls))  # no config measured twice
    assert {pid for _, _, pid in rows} == {p.pid for p in procs}  # both measured
    assert len(calls) >= 3 * 10
    written = [json.loads(open(f"{log}.{p.pid}").read()) for p in procs]
    assert sorted(written) == [False, True]  # the module written once
    _, tuned, _ = read_module(path)
    assert sorted(tuned[KEY_A]) == [1, 64, 4096]
    # each bucket's decision weighs both processes' measurements: its winner is the pick over
    # all of them (which configs the two searches reach depends on how their trials interleave)
    for bucket in (1, 64, 4096):
        measured = [KernelConfig.from_dict(c) for b, c, _ in rows if b == bucket]
        pairs = [(c, landscape(bucket, c)) for c in measured]
        eager = next(cm for cm in pairs if cm[0].strategy == "torch")
        assert KernelConfig.from_dict(tuned[KEY_A][bucket]) == pick_never_slower(pairs, eager)[0]


def test_a_claim_of_a_killed_process_is_dead(tmp_path):
    """A claim lives in the storage: a second claim of its key fails while its owner lives,
    and succeeds once it is released, or once its owner's process is gone."""
    from mlpgen.claims import Claims

    url = str(tmp_path / "claims.optuna.journal")
    a, b = Claims(tune_storage(url), "s"), Claims(tune_storage(url), "s")
    first = a.take("k")
    assert first is not None and b.take("k") is None and b.take("other") is not None
    a.release(first)
    assert b.take("k") is not None
    b.owner = f"{b.host}:{dead_pid()}"  # a claim made by a process that has exited
    c = Claims(tune_storage(url), "s")
    dead = b.take("gone")
    assert dead is not None and c.take("gone") is not None


def tune_storage(url):
    from mlpgen.claims import make_storage

    return make_storage(url)


def dead_pid() -> int:
    proc = multiprocessing.get_context("spawn").Process(target=int)
    proc.start()
    proc.join()
    return proc.pid


def killed_shared_worker(path, url, log):
    """Run in a spawned process: tune against the shared storage and die without cleanup in
    the middle of its 4th measurement (its claim still held)."""
    use_table()
    calls = []

    def measure(bucket, config):
        calls.append(config)
        with open(log, "a") as f:
            f.write(json.dumps([bucket, config.to_dict(), os.getpid()]) + "\n")
        if len(calls) == 4:
            os._exit(9)
        time.sleep(0.05)
        return landscape(bucket, config)

    tune(path, job((1, 64, 4096), trials=10), [measure], url, progress=quiet())


def test_a_process_killed_while_sharing_a_study_loses_only_its_candidate_in_flight(tmp_path):
    """One of two processes dies mid-measurement: the other measures none of its finished
    trials again, takes over the candidate it was measuring (its owner is gone: the claim is
    dead) and writes the module with every bucket."""
    path = write_module(tmp_path / f"{SPEC.name}.py", SPEC)
    url, log = str(tmp_path / "shared.optuna.journal"), str(tmp_path / "calls")
    ctx = multiprocessing.get_context("spawn")
    killed = ctx.Process(target=killed_shared_worker, args=(path, url, log))
    killed.start()
    killed.join(120)
    assert killed.exitcode == 9
    survivor = ctx.Process(target=shared_worker, args=(path, url, log, 0.0))
    survivor.start()
    survivor.join(300)
    assert survivor.exitcode == 0
    rows = [json.loads(line) for line in open(log)]
    first = [(b, json.dumps(c, sort_keys=True)) for b, c, pid in rows if pid == killed.pid]
    second = [(b, json.dumps(c, sort_keys=True)) for b, c, pid in rows if pid == survivor.pid]
    assert len(first) + len(second) == len(rows)
    assert len(first) == 4 and not set(first[:3]) & set(second)  # finished: kept
    assert first[3] in second  # in flight when it died: measured again
    assert json.loads(open(f"{log}.{survivor.pid}").read()) is True
    assert sorted(read_module(path)[1][KEY_A]) == [1, 64, 4096]


def test_runs_over_other_buckets_decide_their_own():
    """Two searches of one spec and GPU over different buckets, on one storage: the decision
    of one does not keep the other from deciding (and writing) its buckets."""
    from mlpgen.claims import Claims

    storage = memory()
    held = Claims(storage, f"{SPEC.name}|{KEY_A}").take("decide " + plan(job((64,)))[0].name)
    assert held is not None  # a live decision over bucket 64, as another process would hold
    other = search(job((4096,), trials=5), [Recorder()], storage, quiet())
    assert other.final and other[4096].winner[0] != TORCH
    blocked = search(job((64,), trials=5), [Recorder()], storage, quiet())
    assert not blocked.final  # bucket 64's decision is someone else's


# a bucket's winner whose strategy no other bucket takes (rowblock: its chunk written in, a
# function of its own, 172 lines for SPEC) and the headline's H200 winners at 256 and 1024 rows
# (two tile variants of one persist function)
ROWBLOCK = KernelConfig("rowblock", block_m=16, chunk=64, num_warps=4, pdl=True)
PERSIST_A = KernelConfig(
    "persist", block_m=32, block_n=32, last_block_n=16, num_warps=4, num_stages=4, pdl=True
)
PERSIST_B = KernelConfig(
    "persist", block_m=64, block_n=64, last_block_n=32, num_warps=4, num_stages=4, pdl=True
)


def decided(winners: dict[int, tuple[KernelConfig, float]], torch_us: float = 20.0) -> dict:
    """BucketResults as decide leaves them: winner and torch path timed with a 0.5% spread."""
    from mlpgen.decide import BucketResult

    out = {}
    for b, (config, us) in winners.items():
        m, t = Measurement("ok", us=us, spread=0.005), Measurement("ok", us=torch_us, spread=0.005)
        out[b] = BucketResult(b, None, (config, m), t, None, [], 1, [(config, m), (TORCH, t)])
    return out


def timed(times: dict, spread: float = 0.005, torch_us: float = 20.0) -> Recorder:
    """A measure of fixed times {(bucket, config): us} (the torch path torch_us; a config not
    in `times` 100 us: never a tie), every sample with `spread`."""

    def fn(bucket, config):
        us = torch_us if config == TORCH else times.get((bucket, config), 100.0)
        return Measurement("ok", us=us, spread=spread)

    return Recorder(fn)


def module_source(results: dict) -> str:
    from mlpgen.emit import default_table, render
    from mlpgen.tune import winners_table

    tuned = {KEY_A: winners_table(results), "default": default_table(SPEC, sorted(results))}
    return render(SPEC, tuned, {})


@pytest.mark.parametrize(
    "us, spread, torch_us, taken",
    [
        (5.05, 0.005, 20.0, True),  # 1% slower: within the 2% floor
        (5.2, 0.005, 20.0, False),  # 4% slower, the samples agree within 0.5%: beyond the noise
        (5.2, 0.05, 20.0, True),  # 4% slower, the samples 5% apart: within the noise
        (5.05, 0.005, 5.12, False),  # a tie, but not 2% faster than the torch path
    ],
)
def test_a_bucket_that_alone_needs_a_strategy_takes_its_neighbours_winner_where_it_ties(
    us, spread, torch_us, taken
):
    """Bucket 1's rowblock winner is its strategy's only cell; persist, bucket 16's winner, is
    measured there beside it, interleaved; it is taken only where its median is within the
    noise (NOISE, or the samples' spread) and it beats the torch path (recheck's median, not
    measured again) beyond the noise (never_slower). The module then carries no rowblock
    kernel."""
    from mlpgen.decide import RECHECK_ROUNDS, consolidate

    results = decided({1: (ROWBLOCK, 5.0), 16: (PERSIST_A, 6.0)}, torch_us)
    before = module_source(results)
    rec = timed({(1, ROWBLOCK): 5.0, (1, PERSIST_A): us, (16, PERSIST_A): 6.0}, spread, torch_us)
    consolidate(results, rec, RECHECK_ROUNDS, SPEC, [DEFAULT])
    # the first comparison: at bucket 1, the winner and persist, round after round
    assert rec.calls[:6] == [(1, ROWBLOCK), (1, PERSIST_A)] * (RECHECK_ROUNDS + 1)
    assert all(c != TORCH for _, c in rec.calls)
    after = module_source(results)
    r = results[1]
    assert r.consolidate[0]["winner_median"] == 5.0 and r.consolidate[0]["median"] == us
    assert r.consolidate[0]["within"] is taken
    if not taken:
        assert r.winner[0] == ROWBLOCK and r.consolidated is None and after == before
        return
    assert r.winner == (PERSIST_A, r.winner[1]) and r.winner[1].us == us
    assert r.consolidated == {
        "from": ROWBLOCK.to_dict(),
        "from_median": 5.0,
        "to": PERSIST_A.to_dict(),
        "to_median": us,
    }
    assert "def _k_rowblock" in before and "_k_rowblock" not in after
    assert after.count("@triton.jit") < before.count("@triton.jit")
    assert len(after.splitlines()) < len(before.splitlines()) - 150


def test_a_run_of_buckets_moves_together_nearest_first_and_a_tile_variant_after():
    """Buckets 1 to 64 share the rowblock strategy (64 in a tile variant of its own): they take
    persist together, compared nearest to its bucket first, and not at all where one of them
    does not tie (16 here); then the smaller saving: bucket 64's variant gives way to the
    rowblock kernel of 16, which ties there. Nothing is compared twice or offered the torch
    path."""
    from mlpgen.decide import consolidate

    rowblock32 = dataclasses.replace(ROWBLOCK, chunk=32)
    own = {1: ROWBLOCK, 16: ROWBLOCK, 64: rowblock32, 256: PERSIST_A}
    results = decided({1: (ROWBLOCK, 5.0), 16: (ROWBLOCK, 5.0), 64: (rowblock32, 5.0)})
    results[256] = decided({256: (PERSIST_A, 6.0)})[256]
    times = {(b, c): 5.0 for b in (1, 16, 64) for c in (ROWBLOCK, rowblock32)}
    rec = timed(times | {(1, PERSIST_A): 5.0, (16, PERSIST_A): 5.5, (64, PERSIST_A): 5.05})
    consolidate(results, rec, 0, SPEC, [DEFAULT])
    compared = [(b, c) for b, c in rec.calls if c not in (TORCH, own[b])]
    assert compared[:2] == [(64, PERSIST_A), (16, PERSIST_A)]  # the run's move failed at 16
    assert len(set(compared)) == len(compared) and (1, PERSIST_A) not in compared
    assert [results[b].winner[0] for b in own] == [ROWBLOCK, ROWBLOCK, ROWBLOCK, PERSIST_A]
    assert results[64].consolidated["to"] == ROWBLOCK.to_dict()
    source = module_source(results)
    assert ROWBLOCK.kernel_name in source and rowblock32.kernel_name not in source
    # with 16 tying too, the run of three moves: no rowblock kernel is left
    results = decided({1: (ROWBLOCK, 5.0), 16: (ROWBLOCK, 5.0), 64: (rowblock32, 5.0)})
    results[256] = decided({256: (PERSIST_A, 6.0)})[256]
    rec = timed(times | {(b, PERSIST_A): 5.05 for b in (1, 16, 64)})
    consolidate(results, rec, 0, SPEC, [DEFAULT])
    assert [c for _, c in rec.calls if c == PERSIST_A] == [PERSIST_A] * 3
    assert [b for b, c in rec.calls if c == PERSIST_A] == [64, 16, 1]
    assert {results[b].winner[0] for b in results} == {PERSIST_A}
    assert "_k_rowblock" not in module_source(results)


def test_a_tile_variant_goes_where_it_ties_and_nothing_is_measured_that_saves_nothing():
    """Two persist variants (one function, a KERNELS line each): bucket 1024 takes 256's
    variant where it ties. A neighbour's winner that the module carries anyway (the default's)
    saves nothing and is not measured; nor is the torch path offered."""
    from mlpgen.decide import consolidate

    results = decided({256: (PERSIST_A, 5.0), 1024: (PERSIST_B, 6.0)})
    results[4096] = decided({4096: (TORCH, 20.0)}, 20.0)[4096]
    before = module_source(results)
    rec = timed({(256, PERSIST_A): 5.0, (1024, PERSIST_B): 6.0, (1024, PERSIST_A): 6.06})
    consolidate(results, rec, 1, SPEC, [DEFAULT])
    assert results[1024].winner[0] == PERSIST_A and results[256].winner[0] == PERSIST_A
    assert results[4096].winner[0] == TORCH
    after = module_source(results)
    assert after.count("@triton.jit") == before.count("@triton.jit")  # one function all along
    assert PERSIST_B.kernel_name in before and PERSIST_B.kernel_name not in after
    # the same table where the default carries both variants: nothing to save, nothing measured
    results = decided({256: (PERSIST_A, 5.0), 1024: (PERSIST_B, 6.0)})
    rec = timed({})
    consolidate(results, rec, 1, SPEC, [PERSIST_A, PERSIST_B])
    assert rec.calls == [] and results[1024].winner[0] == PERSIST_B


def test_a_move_that_leaves_the_kernel_in_the_cuda_graph_cell_is_undone():
    """Host-bound at bucket 1, persist ties rowblock's score (less host time, a third more GPU
    time): taken, the cell's CUDA-graph winner would be the rowblock kernel (GRAPH_TIE), which
    the module would then still carry, so the bucket keeps its own winner."""
    from mlpgen.decide import consolidate

    rowblock, persist = (dataclasses.replace(c, pdl=False) for c in (ROWBLOCK, PERSIST_A))
    results = decided({1: (rowblock, 3.0), 16: (persist, 6.0)})
    r = results[1]
    r.winner = (rowblock, Measurement("ok", us=3.0, host_us=5.0, spread=0.005))
    r.pairs = [r.winner, *r.pairs[1:]]

    def fn(bucket, config):
        us, host = {TORCH: (20.0, 60.0), rowblock: (3.0, 5.0), persist: (4.0, 4.8)}[config]
        return Measurement("ok", us=us, host_us=host, spread=0.005)

    consolidate(results, Recorder(fn), 1, SPEC, [DEFAULT])
    assert r.consolidate[0]["within"] is True  # a tie on the score the sampler minimises
    assert r.winner[0] == rowblock and r.graph is None and r.consolidated is None
    assert "def _k_rowblock" in module_source(results)


def test_a_resumed_consolidation_replays_its_measurements():
    from mlpgen.decide import consolidate

    study = optuna.create_study(storage=memory())
    winners = {1: (ROWBLOCK, 5.0), 16: (PERSIST_A, 6.0)}
    first = decided(winners)
    consolidate(first, timed({(1, ROWBLOCK): 5.0, (1, PERSIST_A): 5.05}), 2, SPEC, [], {1: study})
    again = decided(winners)
    consolidate(again, Recorder(lambda *a: pytest.fail("measured again")), 2, SPEC, [], {1: study})
    assert again[1].winner[0] == first[1].winner[0] == PERSIST_A
    assert again[1].consolidated == first[1].consolidated


def test_the_search_consolidates_and_the_trial_log_says_what_it_took(tmp_path):
    """With share on, the search's bucket 1 (rowblock: no persist tile fits its space) takes
    bucket 64's persist winner, measured there host-bound at 12 us against rowblock's 13 (scores
    13.8 and 15.4 with their GPU times); the module then carries no rowblock kernel and the
    trial log records the move, both medians."""
    path = write_module(tmp_path / f"{SPEC.name}.py", SPEC)
    alone = search(job((1, 64), recheck=1), [Recorder()], memory(), quiet())
    assert alone[1].winner[0].strategy == "rowblock"
    summary = tune(
        path, job((1, 64), recheck=1, share=True), [Recorder()], memory(), progress=quiet()
    )
    _, tuned, _ = read_module(path)
    assert tuned[KEY_A][1]["strategy"] == tuned[KEY_A][64]["strategy"] == "persist"
    assert "def _k_rowblock" not in path.read_text()
    log = json.loads(trial_log_path(path).read_text())["gpus"][KEY_A]["buckets"]["1"]
    moved = log["consolidated"]
    assert moved["from"]["strategy"] == "rowblock"
    assert moved["to"] == KernelConfig.from_dict(tuned[KEY_A][64]).to_dict()
    assert (moved["from_median"], moved["to_median"]) == (15.4, 13.8)
    assert summary["buckets"]["1"]["consolidated"] == moved
    assert any(c["within"] for c in log["consolidate"])


def test_the_default_budget_is_a_quarter_of_the_space_within_a_floor_and_a_cap():
    from mlpgen.tune import budget

    default = TuneOptions()
    assert default.trials is None
    assert [budget(n, default) for n in (20, 99, 132, 334)] == [12, 24, 33, 48]
    assert budget(334, TuneOptions(trials=7)) == 7  # an explicit budget is that budget
    replayed = TuneOptions(budget_share=0.25, budget_range=(1, None))  # mlpgen.trials' replay
    assert [budget(n, replayed) for n in (20, 99, 334)] == [5, 24, 83]
    # plan: a space within the budget is measured whole, a larger one to its budget
    for b in plan(job((1, 4096), trials=None)):
        n = len(b.space.candidates)
        assert b.target == (n if b.brute else budget(n, default)) and b.brute == (n <= 12)


def leads(lookahead: int) -> list[int]:
    """For each measured kernel the sampler asked for: how many measurements came between its
    hand-over to the compiler and its own measurement."""
    rec = Compiling()
    results = search(job((64, 4096), trials=12, lookahead=lookahead), [rec], memory(), quiet())
    assert all(r.measured <= 12 for r in results.values())
    assert set(rec.compiled) <= {c for _, c in rec.calls}  # nothing compiled goes unmeasured
    start = rec.events.index(next(e for e in rec.events if e[0] == "measure"))
    out = []
    for i, (what, config) in enumerate(rec.events):
        if what == "measure" and ("prefetch", config) in rec.events[start:i]:
            handed = rec.events.index(("prefetch", config), start)
            out.append(sum(w == "measure" for w, _ in rec.events[handed:i]))
    return out


def test_several_trials_are_asked_ahead_and_every_one_is_measured(monkeypatch):
    """With lookahead 3 each bucket keeps three trials asked ahead of its measurements: their
    kernels reach the compiler several measurements before their own (so several compile at
    once), and the search stays within its budget and compiles nothing it does not measure."""
    monkeypatch.setattr("mlpgen.tune.LOOKAHEAD_TRIALS", 4)  # a budget of 12 affords 3
    one, three = leads(1), leads(3)
    assert statistics.median(three) >= statistics.median(one) + 2


class Quick(Recorder):
    """A measure with workers.WorkerMeasure's `quick` switch: records it with every call."""

    quick = True

    def __call__(self, bucket, config):
        self.modes = getattr(self, "modes", []) + [self.quick]
        return super().__call__(bucket, config)


class Again(Recorder):
    """A measure with workers.WorkerMeasure's `again`: re-measurements recorded apart."""

    def __init__(self):
        super().__init__()
        self.again_calls = []

    def again(self, bucket, config):
        self.again_calls.append((bucket, config))
        return self.fn(bucket, config)


def test_re_measurements_time_what_the_bucket_verified():
    """recheck's re-measurements go to the measure's `again` (timing without verifying), each
    of a config the search measured (verified) at that bucket."""
    from mlpgen.decide import RECHECK_ROUNDS

    rec = Again()
    r = search(job((4096,), trials=10, recheck=RECHECK_ROUNDS), [rec], memory(), quiet())[4096]
    assert len(rec.again_calls) == RECHECK_ROUNDS * len(r.recheck)
    assert set(rec.again_calls) <= set(rec.calls)


def test_the_search_times_quickly_and_what_decides_on_the_larger_budget():
    """The search's own measurements run on the quick budget; the re-measurements of the best
    few (and PDL's, kernel sharing's) that the winners rest on run on measure.DECIDE's."""
    from mlpgen.decide import RECHECK_ROUNDS

    rec = Quick()
    r = search(job((4096,), trials=10, recheck=RECHECK_ROUNDS), [rec], memory(), quiet())[4096]
    assert r.measured == 10 and len(rec.modes) > r.measured
    assert rec.modes[: r.measured] == [True] * r.measured
    assert not any(rec.modes[r.measured :]) and rec.quick is False


def test_a_quick_measurement_asks_the_worker_for_the_quick_budget(tmp_path):
    """WorkerMeasure passes its quick switch to the measuring function in the worker."""
    seen = []

    class Worker:
        def run(self, *task):
            seen.append(task)
            return "ok", Measurement("ok", us=1.0)

    m = WorkerMeasure(SPEC, str(tmp_path))  # its own worker is never started
    m.worker = Worker()
    for quick in (True, False):
        m.quick = quick
        assert m(64, DEFAULT).us == 1.0
    assert [task[5] for task in seen] == [True, False]


def test_a_launch_kind_of_few_configs_is_measured(production_table):
    """stream's TMA tiles are four configs of the headline's 65536-row space, behind a flag
    whose other settings are dominated: TPE, learning that the flag is mostly infeasible, and
    the local steps rarely reach them. After the local steps the search draws one config of
    each launch kind not yet measured, so a search of 16 measurements finds the kind that is
    fastest here (a landscape where every TMA tile takes half the others' time)."""

    def fast_tma(bucket, c):
        us = 50.0 if c.tma else 100.0 + (c.block_m or 0) / 64
        return Measurement("ok", us=100.0 if c.strategy == "torch" else us, err=1e-3)

    for seed in range(5):
        rec = Recorder(fast_tma)
        options = TuneOptions(buckets=(65536,), trials=16, seed=seed, recheck=0, share=False)
        hopper = Job(SPEC, KEY_A, options, max_shared=232448)  # an H200's shared memory
        results = search(hopper, [rec], memory(), quiet())
        assert any(c.tma for _, c in rec.calls), [str(c) for _, c in rec.calls]
        assert results[65536].winner[0].tma
