"""The train search (mlpgen.train_tune): against a synthetic landscape of step times it proposes
several configs, picks the fastest verified one, keeps the torch backward where no kernel
config beats it beyond the noise and writes the winner into the module's TUNED cells, where
the module's training path (mlpgen.runtime.train) finds it; under the interpreter, end to end
on a tiny spec: a candidate with a wrong gradient row is rejected and training through the
written module matches the fp32 step."""

import dataclasses
import datetime
import json
import math

import pytest
import torch

from mlpgen.bench import BY_NAME
from mlpgen.decide import NOISE
from mlpgen.emit import entry, read_module, write_module
from mlpgen.measure import Measurement
from mlpgen.runtime import train
from mlpgen.runtime.train import training_of
from mlpgen.selfcheck import load_module
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.train_bench import TrainModels
from mlpgen.train_tune import (
    TORCH_BACKWARD,
    TRAIN_BUDGET,
    firsts,
    measure_train_candidate,
    search_train,
    train_choice,
    train_measure,
    train_space,
    tune_train,
    tuned_module,
    warm_size,
)
from mlpgen.training import (
    FUSED_MAX_MACS,
    TrainConfig,
    default_for,
    one_pass_for,
    reduction_split,
    split_k_fits,
)
from mlpgen.trial_log import trial_log_path
from mlpgen.tune import TuneOptions
from mlpgen.verify import random_problem

SPEC = MLPSpec((64, 64, 64), act="relu", dtype="fp32")
BEST = TrainConfig(block_m=32, block_n=32, block_k=32, num_warps=2, num_stages=3, fused=True)


def landscape(torch_us: float = 10.0, best_us: float = 5.0, flat: bool = False):
    """measure(bucket, choice): the torch backward at torch_us; kernel configs smooth in log2 of
    each field around BEST (best_us there), fused configs faster (flat: every one at best_us);
    8-warp and one_pass configs (among the first measured) the fastest of all but with a wrong
    gradient. Records every call in `.calls`."""

    def measure(bucket, choice):
        measure.calls.append(choice)
        if choice == TORCH_BACKWARD:
            return Measurement("ok", us=torch_us, err=0.0, spread=0.0)
        if choice.num_warps == 8 or choice.one_pass:
            return Measurement("wrong", "dx: row 3 off", us=0.1, err=9.0)
        away = sum(
            abs(math.log2(getattr(choice, n)) - math.log2(getattr(BEST, n)))
            for n in ("block_m", "block_n", "block_k", "num_warps", "num_stages", "split")
        )
        us = best_us * (1 + 0.15 * away) * (1.0 if choice.fused else 1.3)
        if flat:
            us = best_us
        return Measurement("ok", us=us, err=0.0, spread=0.0)

    measure.calls = []
    return measure


def options(**kw):
    return TuneOptions(buckets=(1024,), trials=20, recheck=1, **kw)


def test_the_search_proposes_configs_and_picks_the_fastest_verified():
    measure = landscape()
    results = search_train(SPEC, measure, options(), quiet=True)
    r = results[1024]
    measured = {c for c, _ in r.pairs}
    assert r.measured == 20 == len(measured)  # the budget
    # a config proposed again got its recorded score: measured once, then only re-measured
    assert len(measure.calls) == 20 + len(r.recheck)
    firsts = {TORCH_BACKWARD, default_for(SPEC, 1024), *one_pass_for(SPEC, 1024)}
    assert len(firsts) == 4 and firsts <= measured
    assert len(measured - firsts) >= 16  # the sampler proposed the rest
    assert any(not m.ok for _, m in r.pairs)  # it met the wrong configs and kept searching
    fastest = min((cm for cm in r.pairs if cm[1].ok), key=lambda cm: cm[1].score)
    assert r.winner[0] == fastest[0] and r.winner[0].num_warps != 8 and not r.winner[0].one_pass
    assert r.winner[1].score < 10.0 / (1 + NOISE)  # beats the torch backward beyond the noise
    assert len(train_space(SPEC, 1024).candidates) > 100  # a search, not a sweep


def test_each_kernel_config_is_handed_to_the_compiler_before_it_is_measured():
    """A measure with `prefetch` (TrainMeasure's compiler) gets every bucket's firsts before
    anything is timed, and each later proposal a turn ahead of its measurement."""
    measure = landscape()
    events = []
    measure.prefetch = lambda bucket, choices: events.extend(
        ("compile", bucket, c) for c in choices
    )
    real = measure.__call__

    def timed(bucket, choice):
        events.append(("measure", bucket, choice))
        return real(bucket, choice)

    timed.prefetch, timed.calls = measure.prefetch, measure.calls
    search_train(SPEC, timed, TuneOptions(buckets=(1024, 4096), trials=12, recheck=1), quiet=True)
    first = events.index(next(e for e in events if e[0] == "measure"))
    assert {(b, default_for(SPEC, b)) for b in (1024, 4096)} <= {e[1:] for e in events[:first]}
    measured = [e for e in events if e[0] == "measure" and e[2] != TORCH_BACKWARD]
    assert len(measured) >= 2 * 10
    for e in measured:
        compiled_at = events.index(("compile", *e[1:]))
        assert compiled_at < events.index(e)
        # proposals other than the firsts were compiled while another measurement ran
        if e[2] != default_for(SPEC, e[1]):
            assert any(o[0] == "measure" for o in events[compiled_at : events.index(e)])


@pytest.mark.parametrize("m", [1, 16, 17, 1000, 1024, 20000, 262144, 262157])
def test_a_warm_up_step_launches_what_the_buckets_step_launches(m):
    """warm_size keeps the weight gradient's split (the training kernels specialise on no
    integer: tests/test_runtime.py), with at most split x block_m rows, and under split_k the
    layers whose reductions split."""
    wide = MLPSpec((1024, 4096, 1024), act="gelu_tanh", dtype="bf16")
    split_k = [c for c in train_space(wide, 64).candidates[1:] if c.split_k]
    assert split_k
    for cfg in [*train_space(SPEC, 262144).candidates[1::37], *split_k[::37]]:
        w = warm_size(m, cfg)
        assert 1 <= w <= m and (cfg.split_k or w <= cfg.split * cfg.block_m)
        splits = [min(cfg.split, -(-n // cfg.block_m)) for n in (w, m)]
        assert splits[0] == splits[1]
        # which reductions split_k cuts depends on M: the warm-up takes M itself
        tiles = (cfg.block_m, cfg.block_n, cfg.block_k)
        cut = [reduction_split(r, 1024, 4096, *tiles) for r in (w, m)]
        assert not cfg.split_k or cut[0] == cut[1]


def test_the_fused_kernels_are_searched_only_where_a_rows_work_is_small():
    """A fused program carries its rows through whole layers alone: past FUSED_MAX_MACS a row,
    the space holds the tiled launches only (the headline keeps both)."""
    wide = MLPSpec((1024, 4096, 1024), act="gelu_tanh", dtype="bf16")
    headline = MLPSpec((256, 512, 256), act="gelu", dtype="fp16")
    assert 2 * 1024 * 4096 > FUSED_MAX_MACS >= 2 * 256 * 512

    def kernels(spec, bucket):
        return [c for c in train_space(spec, bucket).candidates if isinstance(c, TrainConfig)]

    for bucket in (1, 1024):
        assert kernels(wide, bucket) and not any(c.fused for c in kernels(wide, bucket))
        assert {c.fused for c in kernels(headline, bucket)} == {False, True}


def test_split_k_is_searched_and_measured_first_where_it_cuts_a_long_reduction():
    """split_k's candidates are the configs it fits at the bucket (split_k_fits: the headline's
    reductions are short, it has none); default_for's split form is measured first where that
    is one of them."""
    wide = MLPSpec((1024, 4096, 1024), act="gelu_tanh", dtype="bf16")
    headline = MLPSpec((256, 512, 256), act="gelu", dtype="fp16")
    assert not any(getattr(c, "split_k", False) for c in train_space(headline, 1).candidates)
    for bucket in (1, 64, 16384):
        kernels = [c for c in train_space(wide, bucket).candidates if isinstance(c, TrainConfig)]
        split = [c for c in kernels if c.split_k]
        assert all(split_k_fits(wide, bucket, c) for c in split)
        assert bool(split) == (bucket < 16384)  # 16384 rows: every launch fills the GPU
        assert {*split, default_for(wide, bucket)} & set(firsts(wide, bucket, {})) == {
            *[dataclasses.replace(default_for(wide, bucket), split_k=True)] * bool(split),
            default_for(wide, bucket),
        }


def test_the_default_budget_is_a_quarter_of_the_space_within_the_train_range():
    opts = TuneOptions(buckets=(1, 1024), recheck=0)
    narrow = MLPSpec((5, 3), dtype="fp32")  # bucket 1: 97 candidates, a quarter of them 24
    assert len(train_space(narrow, 1).candidates) == 97 and TRAIN_BUDGET[0] < 24
    assert search_train(narrow, landscape(), opts, quiet=True)[1].measured == 24
    assert search_train(SPEC, landscape(), opts, quiet=True)[1024].measured == TRAIN_BUDGET[1]


@pytest.mark.parametrize("best_us, kernels_win", [(10.0 / (1 + NOISE / 2), False), (8.0, True)])
def test_the_torch_backward_stays_unless_a_kernel_beats_it_beyond_the_noise(
    tmp_path, monkeypatch, best_us, kernels_win
):
    path = write_module(tmp_path / "m.py", SPEC)
    opts = TuneOptions(buckets=(16, 1024), trials=6, recheck=1)
    measure = landscape(best_us=best_us, flat=True)  # every kernel config faster than torch
    summary = tune_train(path, "default", opts, measure, quiet=True)
    _, tuned, prov = read_module(path)
    stored_at = {}
    for b in (16, 1024):
        stored = stored_at[b] = tuned["default"][b]["train"]
        assert summary["buckets"][str(b)]["train"] == stored
        choice = train_choice(stored)
        assert (choice != TORCH_BACKWARD) == kernels_win
        assert stored["us"] > 0 and ("torch_us" in stored) == kernels_win
    rejected = summary["buckets"]["1024"]["rejected"]
    wrong = [r["config"]["num_warps"] == 8 or r["config"]["one_pass"] for r in rejected]
    assert all(r["verdict"] == "wrong" for r in rejected) and all(wrong)
    assert prov["default"]["train"]["trials"] == 6
    assert (
        datetime.datetime.fromisoformat(prov["default"]["train"]["date"]) <= datetime.datetime.now()
    )
    # the trial log keeps every candidate the train search measured, and what won
    log = json.loads(trial_log_path(path).read_text())["gpus"]["default"]["train"]
    assert log["provenance"] == prov["default"]["train"]
    for b in (16, 1024):
        rec = log["buckets"][str(b)]
        assert len(rec["trials"]) == rec["measured"] == summary["buckets"][str(b)]["measured"]
        assert train_choice(rec["winner"]) == train_choice(stored_at[b])
        assert {t["verdict"] for t in rec["trials"]} >= {"ok", "wrong"}
    mod = load_module(path)
    x = torch.empty(1024, 64)
    got = training_of(mod).config(1024, x)  # what the module's training step runs at this bucket
    assert got is None if not kernels_win else TrainConfig.from_dict(got) == train_choice(stored)
    if not kernels_win:  # a training step at the bucket is eager's: the torch path, autograd
        monkeypatch.setattr(train._Function, "apply", None)  # any use of it fails
        xg = torch.randn(16, 64, requires_grad=True)
        y = mod.FusedMLP()(xg)
        y.sum().backward()
        assert "Addmm" in type(y.grad_fn).__name__ and xg.grad.isfinite().all()


def test_a_fused_step_that_keeps_the_gpu_busy_gives_way_to_the_next_kernel_not_to_torch():
    """Recorded on an H100 (256,512,256 gelu fp16, one row): the fused step of least score takes
    4x the torch backward's GPU time, so never_slower turns it down; the layered step 4% behind
    it on score takes less GPU time than the torch backward and wins, where the torch backward
    won before. Its GPU time set it apart, so the recheck re-measures it though the search
    ranked it below the top three."""
    from mlpgen.decide import BucketResult, recheck

    fused = TrainConfig(block_m=16, block_n=16, block_k=16, num_warps=2, num_stages=4, fused=True)
    near = [dataclasses.replace(fused, block_n=n, num_stages=s) for n, s in ((32, 2), (64, 2))]
    layered = TrainConfig(block_m=16, block_n=64, block_k=32, num_warps=4, num_stages=2)
    # (GPU µs, host µs): scores (the larger plus a fifth of the smaller) 536.1, 558.3, 952.0
    truth = {fused: (242.1, 487.7), layered: (50.1, 548.3), TORCH_BACKWARD: (60.3, 939.9)}
    truth |= {c: (230.0, 494.0 + i) for i, c in enumerate(near)}

    def measure(bucket, c):
        us, host_us = truth[c]
        return Measurement("ok", us=us, host_us=host_us, spread=0.02)

    slow_sample = Measurement("ok", us=50.1, host_us=600.0)  # the search ranked it fourth
    pairs = [(c, slow_sample if c == layered else measure(1, c)) for c in truth]
    r = BucketResult(1, None, None, None, None, [], len(pairs), pairs=pairs)
    recheck(r, measure, 2)
    assert r.winner[0] == layered
    assert r.eager.score == measure(1, TORCH_BACKWARD).score
    r = BucketResult(1, None, None, None, None, [], 4, pairs=[p for p in pairs if p[0] != layered])
    recheck(r, measure, 2)
    assert r.winner[0] == TORCH_BACKWARD  # no kernel both faster per call and not GPU-bound


def test_the_search_leaves_the_module_as_it_is_until_it_writes_the_winners(tmp_path):
    """tune_train measures the module as it stands (its training kernels are mlpgen's, whatever
    its tables name) and writes it once, with the winners; an interrupted search leaves it as
    it was."""
    key = "gpu|sm90|1"
    path = write_module(tmp_path / "m.py", SPEC, key, {16: entry(KernelConfig("torch"), us=1.0)})
    before = path.read_text()
    searched = []
    inner = landscape()  # fused configs the fastest

    def measure(bucket, choice):
        searched.append(path.read_text())
        return inner(bucket, choice)

    opts = TuneOptions(buckets=(16,), trials=6, recheck=1)
    tune_train(path, key, opts, measure, quiet=True)
    assert searched and all(text == before for text in searched)
    _, tuned, _ = read_module(path)
    assert train_choice(tuned[key][16]["train"]).fused
    after = path.read_text()
    assert after != before and "def train_forward" not in after

    def interrupted(bucket, choice):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tune_train(path, key, opts, interrupted, quiet=True)
    assert path.read_text() == after


def test_progress_prints_a_line_per_bucket(capsys):
    search_train(SPEC, landscape(), TuneOptions(buckets=(16, 1024), trials=4, recheck=0))
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0].split() for line in lines] == [["bucket", "16"], ["bucket", "1024"]]
    assert all("4/4 trials, best" in line for line in lines)


TINY = MLPSpec((7, 12, 5), act="gelu", dtype="fp32")


@pytest.mark.interpret
def test_end_to_end_a_wrong_gradient_is_rejected_and_the_module_trains_right(tmp_path, monkeypatch):
    """Under the interpreter: bucket 20's default config is made to corrupt one row of dx; the
    search rejects it, writes the winners, and the written module trains with the stored
    config, its step equal to the fp32 step."""
    # the module is loaded here, ahead of the search, to corrupt a config's step
    path = write_module(tmp_path / "tiny.py", TINY, buckets=(4, 20))
    bad = default_for(TINY, 20)
    training = training_of(tuned_module(str(path)))
    real = training.train_backward

    def corrupt(gy, x, y, hs, zs, weights, cfg, *args, **kw):
        dx, grads = real(gy, x, y, hs, zs, weights, cfg, *args, **kw)
        if TrainConfig.from_dict(cfg) == bad and dx is not None:
            dx[3] += 1.0
        return dx, grads

    monkeypatch.setattr(training, "train_backward", corrupt)

    def measure(bucket, choice):
        """Verified for real; the interpreter's kernels timed 10^4x faster, so that they beat
        the torch backward (torch's CPU ops) as a GPU's would."""
        m = measure_train_candidate(TINY, bucket, choice, str(path))
        if not m.ok or choice == TORCH_BACKWARD:
            return m
        return dataclasses.replace(m, us=m.us / 1e4, host_us=m.host_us / 1e4)

    opts = TuneOptions(buckets=(4, 20), trials=3, recheck=1)
    summary = tune_train(path, "default", opts, measure, quiet=True)
    rejected = summary["buckets"]["20"]["rejected"]
    assert [TrainConfig.from_dict(r["config"]) for r in rejected] == [bad]
    assert rejected[0]["verdict"] == "wrong" and "dx" in rejected[0]["reason"]
    _, tuned, _ = read_module(path)
    trained = load_module(path)
    for b in (4, 20):
        stored = tuned["default"][b]["train"]
        assert train_choice(stored) not in (bad, TORCH_BACKWARD)
        x, weights, biases = random_problem(TINY, b + 3, seed=b)
        assert training_of(trained).config(b + 3, x) == stored  # what the step below runs
        models = TrainModels(TINY, trained, weights, biases)
        got = models.prepare(BY_NAME["mlpgen"], x, lambda: None)
        verdict = models.verdict(got.output(), models.expected(x))
        assert verdict.ok, verdict.reason


@pytest.mark.interpret
def test_train_measure_compiles_in_its_pool_then_times_in_its_worker(tmp_path):
    """TrainMeasure's processes under the interpreter: a config prefetched for a bucket is run
    by the compile pool (warm_train_candidate), then verified and timed by the worker."""
    path = write_module(tmp_path / "tiny.py", TINY, buckets=(20,))
    cfg = TrainConfig(block_m=16, block_n=16, block_k=16, split=2, fused=True)
    measure = train_measure(TINY, path, None, TuneOptions(buckets=(20,)))
    try:
        measure.prefetch(20, [cfg, TORCH_BACKWARD])
        m = measure(20, cfg)
        assert m.ok and m.us > 0, m.reason
        assert measure.compiler.compiled() == 1 and not measure.compiler.errors
        assert measure(20, TORCH_BACKWARD).ok
    finally:
        measure.close()


def test_a_winner_that_keeps_the_gpu_busy_names_the_graph_choice():
    """Where the winner's GPU time is more than GRAPH_TIE over another candidate's, its cell's
    "graph" names the candidate of least GPU time (a CUDA-graph replay has no host time to
    save; recorded on an H100: the fused step 107 µs, the torch backward 63); cuBLASLt's step is
    never one (its workspace is made outside a capture); a winner within GRAPH_TIE has none."""
    from mlpgen.decide import BucketResult
    from mlpgen.train_tune import LT_BACKWARD, train_cell

    fused = TrainConfig(block_m=16, block_n=32, block_k=32, num_warps=4, num_stages=4, fused=True)
    won = Measurement("ok", us=106.9, host_us=277.6)
    torch_ = Measurement("ok", us=62.6, host_us=542.4)
    pairs = [(fused, won), (TORCH_BACKWARD, torch_), (LT_BACKWARD, Measurement("ok", us=40.0))]
    cell = train_cell(BucketResult(1, None, (fused, won), torch_, None, [], 3, pairs))
    assert cell["graph"] == {"backward": "torch", "us": 62.6}
    assert TrainConfig.from_dict(cell) == fused and (cell["us"], cell["torch_us"]) == (106.9, 62.6)
    close = Measurement("ok", us=64.0, host_us=277.6)
    pairs = [(fused, close), (TORCH_BACKWARD, torch_)]
    assert "graph" not in train_cell(BucketResult(1, None, pairs[0], torch_, None, [], 2, pairs))


@pytest.mark.interpret
@pytest.mark.parametrize("kernels_win", [True, False])
def test_a_captured_step_runs_the_graph_choice_warmed_outside_the_capture(
    tmp_path, monkeypatch, kernels_win
):
    """A bucket whose training step has a graph choice: outside a capture a call trains with
    the winner, and its first call at that M runs one throwaway step of the graph choice first
    (so a capture launches no kernel it has to load); in a capture (Training.capturing, faked
    here: the interpreter has no streams) the step is the graph choice's."""
    kernels = TrainConfig(block_m=16, block_n=16, block_k=16, num_warps=4, num_stages=1).to_dict()
    torch_ = TORCH_BACKWARD.to_dict()
    won, graph = (kernels, torch_) if kernels_win else (torch_, kernels)
    path = write_module(tmp_path / "tiny.py", TINY, buckets=(16,))
    _, tuned, prov = read_module(path)
    cell = tuned["default"][16] | {"train": won | {"us": 90.0, "graph": graph | {"us": 60.0}}}
    write_module(path, TINY, "default", {16: cell}, prov.get("default"), (16,), merge=True)
    mod = load_module(path)
    ran = []  # which step each training call ran: "torch" or "kernels"
    reference, apply = vars(mod)["reference"], train._Function.apply
    monkeypatch.setitem(vars(mod), "reference", lambda *a: ran.append("torch") or reference(*a))
    monkeypatch.setattr(train._Function, "apply", lambda *a: ran.append("kernels") or apply(*a))
    fused = mod.FusedMLP()
    x = torch.randn(13, 7, requires_grad=True)
    first, second = ("kernels", "torch") if kernels_win else ("torch", "kernels")
    fused(x).sum().backward()
    assert ran == [second, first]  # the graph choice warmed, then the call's own step
    fused(x).sum().backward()
    assert ran == [second, first, first]
    monkeypatch.setattr(train.training_of(mod), "capturing", lambda x: True)
    fused(x).sum().backward()
    assert ran == [second, first, first, second]
