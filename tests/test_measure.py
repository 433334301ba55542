"""Measuring one candidate, on the CPU: the worker process survives hangs, crashes and errors
(the worker functions below run in spawned processes), and verification catches wrong output
(the rendered kernels run through Triton's interpreter)."""

import atexit
import math
import os
import subprocess
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from mlpgen.measure import (
    GIVE_UP,
    HOST_BUCKET_MAX,
    Measurement,
    WorkerPoisoned,
    candidate_module,
    describe,
    launcher,
    measure_candidate,
    verify_sizes,
)
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.workers import Compiler, Worker, WorkerMeasure, WorkerStartError

SPEC = MLPSpec((24, 40, 9), act="gelu", dtype="fp32")
CFG = KernelConfig(block_m=16, chunk=32, num_warps=2)


# --- functions run inside worker processes (spawn imports this module by name) ---------------


def fake_compile(spec, config, workdir):
    """A compile that takes a while and leaves a trace: one line per config, in order."""
    time.sleep(0.2)
    if config.block_m == 64:
        raise RuntimeError("out of resource: shared memory")
    with open(Path(workdir) / "compiled", "a") as f:
        f.write(f"{config.block_m}\n")


def answer(x):
    return ("pid", os.getpid(), x * 2)


def hang(x):
    time.sleep(60)


def die(x):
    os._exit(3)


def hang_in_a_child(path):
    # like Triton waiting on ptxas: the worker hangs on a subprocess of its own
    child = subprocess.Popen(["sleep", "60"])
    Path(path).write_text(str(child.pid))
    child.wait()


def fail(x):
    raise ValueError(f"bad input {x}\nsecond line")


def poisoned_then_answer(x):
    if x == "poison":
        atexit.register(time.sleep, 3)  # a CUDA context torn down after a fault exits slowly
        raise WorkerPoisoned("illegal memory access")
    return answer(x)


def slow_exit(x):
    atexit.register(time.sleep, 3)  # like an interpreter and a CUDA context shutting down
    return answer(x)


def endless_compile(spec, config, workdir):
    time.sleep(60)


WARMED_IN = None  # the process whose warm-up ran (set in the worker by `warmed`)


def warmed():
    global WARMED_IN
    WARMED_IN = os.getpid()


def warmed_answer(x):
    return (WARMED_IN, os.getpid(), x)


def warm_fails():
    raise RuntimeError("no GPU here")


def fake_measure(spec, bucket, config, workdir, seed, quick=False, give_up_us=None):
    if config.block_m == 32:
        os._exit(1)  # like an illegal memory access taking the process down
    if quick:  # a time per config, and the give-up time it was handed as its reason
        return Measurement("ok", str(give_up_us), us=float(config.num_warps), err=0.0)
    return Measurement("ok", us=float(bucket), err=0.0)


def slow_measure(spec, bucket, config, workdir, seed, quick=False, give_up_us=None):
    time.sleep(0.005)
    return Measurement("ok", us=float(bucket), err=0.0)


# ---------------------------------------------------------------------------------------------


def test_worker_survives_an_exception():
    with Worker(fail, limit_s=20) as w:
        assert w.run(7) == ("error", "ValueError: bad input 7")
        pid = w.proc.pid
        assert w.run(8)[0] == "error" and w.proc.pid == pid and w.restarts == 0
    assert w.proc is None


def test_a_launched_worker_starts_and_warms_up_before_its_first_task():
    """launch starts the process without waiting for it; its warm-up runs in it before the
    first task, which waits for the start-up and is served by that same process."""
    with Worker(warmed_answer, limit_s=20, warm=warmed) as w:
        w.launch()
        assert w.proc is not None and not w.ready
        pid = w.proc.pid
        w.launch()  # already running: no second process
        assert w.proc.pid == pid
        assert w.run(7) == ("ok", (pid, pid, 7)) and w.ready and w.restarts == 0
    with Worker(answer, limit_s=20, warm=warm_fails) as w:  # a failed warm-up is no failure
        w.launch()
        assert w.run(3) == ("ok", ("pid", w.proc.pid, 6))


def test_a_worker_closed_without_grace_is_killed_at_once():
    w = Worker(slow_exit, limit_s=20)
    assert w.run(2)[0] == "ok"
    proc = w.proc
    t0 = time.monotonic()
    w.close(graceful=False)
    assert time.monotonic() - t0 < 2.5 and not proc.is_alive() and w.proc is None


def test_a_compile_pool_closed_without_grace_kills_a_compile_in_progress():
    """Killed by close, a compile in progress is no compile error of the run."""
    compiler = Compiler(SPEC, "unused", processes=1, fn=endless_compile)
    compiler.prefetch([CFG])
    deadline = time.monotonic() + 60
    while compiler.state[CFG] != "busy" or not compiler.workers[0].ready:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    time.sleep(0.5)  # the task sent
    t0 = time.monotonic()
    compiler.close(graceful=False)
    assert time.monotonic() - t0 < 10 and not compiler.errors
    assert not any(t.is_alive() for t in compiler.threads)


def test_worker_is_replaced_after_a_hang_and_after_a_crash():
    with Worker(hang, limit_s=1.0) as w:
        t0 = time.perf_counter()
        status, reason = w.run(1)
        assert status == "timeout" and "1s" in reason and time.perf_counter() - t0 < 10
        w.fn = die  # the replacement worker runs this
        status, reason = w.run(1)
        assert status == "crash" and "exit code 3" in reason
        w.fn = answer
        status, (_, pid, value) = w.run(5)
        assert (status, value) == ("ok", 10) and pid != os.getpid() and w.restarts == 2


def test_a_timeout_kills_what_the_worker_started(tmp_path):
    pid_file = tmp_path / "child.pid"
    with Worker(hang_in_a_child, limit_s=3.0) as w:
        status, _ = w.run(str(pid_file))
        assert status == "timeout"
    child = int(pid_file.read_text())
    for _ in range(50):  # killed with the worker's process group (a zombie until reaped by init)
        try:
            state = Path(f"/proc/{child}/stat").read_text().split()[2]
        except FileNotFoundError:
            break
        if state == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the worker's child {child} outlived the timeout")


def test_a_poisoned_worker_is_replaced_before_the_next_task():
    # the worker answers, then exits: the next task must go to a new worker, not to the dying one
    with Worker(poisoned_then_answer, limit_s=20) as w:
        status, reason = w.run("poison")
        assert status == "error" and "worker replaced" in reason and w.restarts == 1
        status, (_, pid, value) = w.run(4)
        assert (status, value) == ("ok", 8) and w.restarts == 1


def test_a_worker_that_cannot_start_is_an_error_of_the_run_not_of_a_candidate():
    with pytest.raises(WorkerStartError, match="cannot start"):
        Worker(lambda x: x).run(1)  # spawn cannot pickle a lambda


def test_worker_measure_turns_failures_into_verdicts(tmp_path):
    m = WorkerMeasure(SPEC, str(tmp_path), limit_s=20, fn=fake_measure)
    try:
        assert m(64, CFG) == Measurement("ok", us=64.0, err=0.0)
        crashed = m(64, KernelConfig(block_m=32))
        assert crashed.verdict == "crash" and not crashed.ok and crashed.score is None
        assert m(16, CFG).us == 16.0  # a fresh worker took over
    finally:
        m.close()


def test_the_search_drivers_sharing_a_worker_take_turns(tmp_path):
    """WorkerMeasure is driven by WorkerMeasure.drivers threads at once (tune.search): their
    calls take turns on the one worker, so each gets its own candidate's measurement."""
    m = WorkerMeasure(SPEC, str(tmp_path), limit_s=20, fn=slow_measure)
    got = {16: [], 64: []}

    def drive(bucket):
        for _ in range(15):
            got[bucket].append(m(bucket, CFG).us)

    try:
        threads = [threading.Thread(target=drive, args=(b,)) for b in got]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        m.close()
    assert m.drivers == 2
    assert got == {16: [16.0] * 15, 64: [64.0] * 15}


def test_search_measurements_give_up_past_twice_the_buckets_best(tmp_path):
    """A quick (search) measurement is handed GIVE_UP times the best score its bucket has
    measured so far, per bucket; the first of a bucket and the full re-measurements none."""
    m = WorkerMeasure(SPEC, str(tmp_path), limit_s=20, fn=fake_measure, quick=True)
    try:
        handed = [m(64, KernelConfig(block_m=16, num_warps=w)).reason for w in (8, 4, 8)]
        assert handed == ["None", str(GIVE_UP * 8), str(GIVE_UP * 4)]
        # another bucket has its own best
        assert m(16, KernelConfig(block_m=16, num_warps=8)).reason == "None"
        m.quick = False
        assert m(64, KernelConfig(block_m=16, num_warps=2)) == Measurement("ok", us=64.0, err=0.0)
    finally:
        m.close()


def test_the_search_and_the_decision_time_on_their_own_budgets(monkeypatch):
    """The search's measurements take measure.QUICK's budget, the decision's measure.DECIDE's:
    long calls in short bursts on both, the decision with more GPU time than the search."""
    from mlpgen import measure
    from mlpgen.timing import Timing

    seen = []

    def fake(call, gpu, **budget):
        seen.append(budget)
        return Timing(5.0, 0.01, 4.0, 0.01)

    monkeypatch.setattr(measure, "time_call", fake)
    for quick in (True, False):
        assert measure.timed(lambda: None, True, True, quick) == (4.0, 5.0, 0.01, False)
    quick, decide = seen
    assert quick["long_us"] == decide["long_us"] == 1000.0
    assert decide["rep_ms"] > quick["rep_ms"] and "loops" not in decide


def test_measurement_score_and_round_trip():
    # the larger of the two times, plus a share of the smaller (HIDDEN_WEIGHT): 0.2
    m = Measurement("ok", us=10.0, host_us=18.0, err=0.2, spread=0.03)
    assert m.score == 20.0
    assert Measurement("ok", us=10.0).score == 10.0
    assert Measurement("ok", us=24.0, host_us=18.0).score == 27.6
    assert Measurement.from_dict(m.to_dict()) == m
    # the eager reference of a TUNED cell: nn.Sequential's times, else (older logs) the torch path's
    torch_path = Measurement("ok", us=20.0, host_us=60.0, seq_us=18.0, seq_host_us=45.0)
    assert torch_path.eager_times() == {"eager_us": 18.0, "eager_host_us": 45.0}
    assert Measurement.from_dict(torch_path.to_dict()) == torch_path
    assert Measurement("ok", us=20.0, host_us=60.0).eager_times() == {
        "eager_us": 20.0,
        "eager_host_us": 60.0,
    }
    # a trial log written before the spread was recorded, with a field no longer measured
    assert Measurement.from_dict({"verdict": "ok", "us": 6.4, "stream_us": 13.6}).score == 6.4
    assert Measurement.from_dict(Measurement("wrong", "nan").to_dict()).reason == "nan"
    with pytest.raises(ValueError):
        Measurement("ok")
    with pytest.raises(ValueError):
        Measurement("fine", us=1.0)


def test_verify_sizes_are_two_and_include_an_m_that_is_not_a_multiple_of_block_m():
    assert verify_sizes(1, CFG) == (1, 1)
    assert verify_sizes(37, CFG) == (37, 37)
    for bucket in (16, 64, 262144):
        sizes = verify_sizes(bucket, KernelConfig(block_m=16))
        assert len(sizes) == 2 and sizes[0] == bucket and any(m % 16 for m in sizes)


def test_describe_is_one_line():
    assert describe(RuntimeError("CUDA error: an illegal memory access\nmore")) == (
        "RuntimeError: CUDA error: an illegal memory access"
    )
    assert describe(KeyError()) == "KeyError"


@pytest.mark.interpret
def test_measure_candidate_verifies_and_times_the_shipped_kernel(tmp_path):
    m = measure_candidate(SPEC, 37, CFG, str(tmp_path))
    assert m.ok and m.err < 0.05 and m.us > 0 and m.host_us is not None and m.spread >= 0
    torch_path = measure_candidate(SPEC, 16, KernelConfig(strategy="torch"), str(tmp_path))
    assert torch_path.ok and torch_path.err < 1e-3
    assert torch_path.seq_us > 0 and torch_path.seq_host_us > 0  # nn.Sequential, timed beside
    assert m.seq_us is None
    big = measure_candidate(SPEC, HOST_BUCKET_MAX + 1, KernelConfig("torch"), str(tmp_path))
    assert big.host_us is None  # per-call host time only up to HOST_BUCKET_MAX
    assert len(list(tmp_path.glob("cand_*.py"))) == 2  # one module per kernel source


@pytest.mark.interpret
def test_a_buckets_references_are_computed_once_and_a_spoiled_one_again(tmp_path, monkeypatch):
    """Every candidate of a bucket is checked on the same problems: their fp32 references are
    kept between candidates, one spoiled since (a wild write) is computed again, and nothing
    is kept where the budget has no room; a wrong candidate is caught on kept references."""
    import collections

    from mlpgen import measure

    computed = []
    real = measure.reference
    monkeypatch.setattr(measure, "reference", lambda *a: computed.append(1) or real(*a))
    monkeypatch.setattr(measure, "_REFERENCES", collections.OrderedDict())
    assert measure_candidate(SPEC, 20, CFG, str(tmp_path)).ok
    first = len(computed)
    assert first >= 5  # two checked runs, the calls back to back
    other = KernelConfig(block_m=32, chunk=32)
    assert measure_candidate(SPEC, 20, other, str(tmp_path)).ok and len(computed) == first
    next(iter(measure._REFERENCES.values()))[0].add_(1.0)
    assert measure_candidate(SPEC, 20, CFG, str(tmp_path)).ok and len(computed) == first + 1
    mod = candidate_module(SPEC, CFG, tmp_path)
    monkeypatch.setattr(mod, "_launch", lambda *a, **k: real(SPEC, a[0], a[1], a[2]) * 1.1)
    wrong = measure_candidate(SPEC, 20, CFG, str(tmp_path))
    assert wrong.verdict == "wrong" and len(computed) == first + 1
    monkeypatch.undo()
    monkeypatch.setattr(measure, "reference", lambda *a: computed.append(1) or real(*a))
    monkeypatch.setattr(measure, "_REFERENCES", collections.OrderedDict())
    monkeypatch.setattr(measure, "reference_budget", lambda device: 0)
    for _ in range(2):
        measure_candidate(SPEC, 64, CFG, str(tmp_path))
    assert len(computed) == 3 * first + 1 and not measure._REFERENCES


@pytest.mark.interpret
def test_a_verified_configs_re_measurement_only_times_it(tmp_path, monkeypatch):
    """The re-measurements decisions rest on (WorkerMeasure.again, decide.recheck) are of configs
    their bucket verified: timed on the same call path, with no reference computed."""
    import collections

    from mlpgen import measure

    computed = []
    real = measure.reference
    monkeypatch.setattr(measure, "reference", lambda *a: computed.append(1) or real(*a))
    monkeypatch.setattr(measure, "_REFERENCES", collections.OrderedDict())
    m = measure_candidate(SPEC, 20, CFG, str(tmp_path), verified=True)
    assert m.ok and m.us > 0 and m.host_us > 0 and m.err is None and computed == []
    assert measure_candidate(SPEC, 20, CFG, str(tmp_path)).err is not None and computed


@pytest.mark.interpret
def test_timing_runs_the_modules_hot_path(tmp_path, monkeypatch):
    """Verification launches through _launch (it writes into the poisoned output); timing runs
    mlp(), the call a user makes (the lane where the strategy has one, else the plan path), so
    host time is what a call costs."""
    mod = candidate_module(SPEC, CFG, tmp_path)
    counts = {"_launch": 0, "mlp": 0, "_forward": 0}
    for name in counts:
        real = getattr(mod, name)

        def counted(*a, _real=real, _name=name, **kw):
            counts[_name] += 1
            return _real(*a, **kw)

        monkeypatch.setattr(mod, name, counted)
    m = measure_candidate(SPEC, 37, CFG, str(tmp_path))
    assert m.ok
    assert counts["_forward"] >= counts["mlp"] >= 3  # the timed calls
    # verification launches directly, a timed call through _forward
    assert counts["_launch"] == len(verify_sizes(37, CFG)) + counts["_forward"]


@pytest.mark.interpret
def test_configs_differing_only_in_tiles_share_a_module_and_run_their_own_tiles(tmp_path):
    """Rowblock's row tile is a constexpr argument: its two configs share one module (one
    import in a worker), each with its own KERNELS entry, and each computes the MLP at an M
    that is a multiple of neither tile."""
    from mlpgen.verify import check_run

    tall = KernelConfig(block_m=32, chunk=32, num_warps=2)
    mod = candidate_module(SPEC, CFG, tmp_path)
    assert candidate_module(SPEC, tall, tmp_path) is mod
    assert mod.KERNELS[CFG.kernel_name][1] == (16,) and mod.KERNELS[tall.kernel_name][1] == (32,)
    assert mod.KERNELS[CFG.kernel_name][0] is mod.KERNELS[tall.kernel_name][0]
    for config in (CFG, tall):
        assert check_run(launcher(mod, config), SPEC, 37, seed=5).ok


@pytest.mark.interpret
def test_candidate_modules_leave_out_the_compile_op(tmp_path):
    """A candidate is only ever called eagerly, so its module registers no torch.compile op
    (a registration costs a module ~60 ms and a process an import of torch._dynamo); it still
    computes the MLP. A shipped module registers its op on import."""
    from mlpgen.emit import entry, render
    from mlpgen.verify import check, random_problem, reference

    mod = candidate_module(SPEC, CFG, tmp_path)
    assert mod.OP is None and mod.OP_NAME is None
    x, w, b = random_problem(SPEC, 37, "cpu", seed=2)
    assert check(mod.mlp(x, w, b), reference(SPEC, x, w, b), SPEC.dtype).ok
    shipped = render(SPEC, {"default": {1: entry(CFG)}}, {})
    assert 'OP_NAME, OP, _BACKWARD_OP = _mlpgen("mlpgen.runtime.op")' in shipped
    assert '= _mlpgen("mlpgen.runtime.op")' not in Path(mod.__file__).read_text()


@pytest.mark.interpret
def test_timing_serves_each_launch_variant_its_own_config(tmp_path):
    """Launch variants of one kernel share its module: each is timed with its own config, not
    the one the module was rendered with, and caches of the previous variant are dropped."""
    from mlpgen.emit import entry
    from mlpgen.measure import hot_path
    from mlpgen.verify import random_problem

    variant = KernelConfig(block_m=16, chunk=32, num_warps=4)
    mod = candidate_module(SPEC, CFG, tmp_path)
    assert candidate_module(SPEC, variant, tmp_path) is mod  # the same kernel source
    x, w, b = random_problem(SPEC, 37, "cpu", seed=1)
    for cfg in (CFG, variant, CFG):
        mod._CONFIGS[("default", 37, False)] = {"stale": True}
        call = hot_path(mod, cfg, x, w, b)
        assert mod.config_for(37, "default") == entry(cfg)
        torch.testing.assert_close(call(), mod.reference(x, w, b), atol=1e-4, rtol=1e-4)


@pytest.mark.interpret
def test_a_wrong_call_path_is_caught(tmp_path, monkeypatch):
    """The kernel verifies through _launch, but the call that is timed (mlp(): the lane or the
    plan path) returns something else: the candidate is wrong, not timed."""
    mod = candidate_module(SPEC, CFG, tmp_path)
    real = mod.mlp
    monkeypatch.setattr(mod, "mlp", lambda x, w, b=None: real(x, w, b) * 1.1)
    m = measure_candidate(SPEC, 37, CFG, str(tmp_path))
    assert m.verdict == "wrong" and "through mlp()" in m.reason and m.us is None


@pytest.mark.interpret
def test_a_call_that_spoils_the_previous_calls_output_is_caught(tmp_path, monkeypatch):
    """Like a PDL race: each call writes into the previous call's output. Checked right after
    each call, every output is right; checked after calls back to back, the first is not."""
    mod = candidate_module(SPEC, CFG, tmp_path)
    real, last = mod.mlp, []

    def racy(x, w, b=None):
        y = real(x, w, b)
        if last:
            last[-1][-1] = 0.0
        last.append(y)
        return y

    monkeypatch.setattr(mod, "mlp", racy)
    m = measure_candidate(SPEC, 37, CFG, str(tmp_path))
    assert m.verdict == "wrong" and "call 1 of 3 back to back at M=37" in m.reason, m


@pytest.mark.interpret
@pytest.mark.parametrize(
    "sabotage, verdict, reason",
    [
        ("skip_rows", "wrong", "NaN/Inf"),
        ("past_m", "wrong", "wrote rows past M"),
        ("scaled", "wrong", "x the tolerance"),
        ("one_row", "wrong", "x the tolerance"),
        ("stale", "wrong", "NaN/Inf"),
        ("raises", "error", "RuntimeError: boom"),
    ],
)
def test_wrong_candidates_are_caught(tmp_path, monkeypatch, sabotage, verdict, reason):
    mod = candidate_module(SPEC, CFG, tmp_path)
    real = mod._launch

    def broken(x, weights, biases, cell, out=None):
        m = x.shape[0]
        if sabotage == "raises":
            raise RuntimeError("boom")
        if sabotage == "stale":  # writes into a buffer of its own, and returns another
            real(x, weights, biases, cell, out=torch.empty_like(out))
            return torch.empty_like(out)
        y = real(x, weights, biases, cell, out=out)
        if sabotage == "skip_rows":
            y[m // 2 :] = math.nan
        elif sabotage == "one_row":
            y[m - 1] *= 1.1
        elif sabotage == "past_m":
            y.as_strided((m + 1, y.shape[1]), y.stride())[m] = 0.0
        else:
            y.mul_(1.1)
        return y

    monkeypatch.setattr(mod, "_launch", broken)
    m = measure_candidate(SPEC, 64, CFG, str(tmp_path))
    assert m.verdict == verdict and reason in m.reason and m.us is None, m


@pytest.mark.interpret
def test_real_measure_in_a_worker_and_parallel_compile(tmp_path):
    """The real measure_candidate in a spawned worker (which inherits TRITON_INTERPRET=1),
    its kernel compiled first by the compile pool; a compile that fails is the candidate's
    error, and it is not run."""
    compiler = Compiler(SPEC, str(tmp_path), processes=2)
    broken = Compiler(SPEC, str(tmp_path / "missing"), processes=1)
    m = WorkerMeasure(SPEC, str(tmp_path), limit_s=120, compiler=compiler)
    bad = WorkerMeasure(SPEC, str(tmp_path), limit_s=120, compiler=broken)
    try:
        m.prefetch([KernelConfig(block_m=32, chunk=32), KernelConfig(strategy="torch")])
        result = m(20, CFG)
        assert result.ok and result.err < 0.05, result
        assert compiler.wait(KernelConfig(block_m=32, chunk=32)) is None and not compiler.errors
        failed = bad(20, CFG)
        assert failed.verdict == "error" and failed.reason.startswith("compile: error: ")
        assert list(broken.errors) == [CFG]
    finally:
        for x in (m, bad, compiler, broken):
            x.close()


def test_a_compile_pool_that_cannot_start_stops_the_run():
    """A compiling process that cannot start fails the wait for its config (and every later
    one) with WorkerStartError instead of leaving it queued for ever."""
    compiler = Compiler(SPEC, "unused", processes=1, fn=lambda *a: None)  # spawn cannot pickle it
    try:
        for config in (CFG, KernelConfig(block_m=32, chunk=32)):
            with pytest.raises(WorkerStartError, match="cannot start"):
                compiler.wait(config)
    finally:
        compiler.close()


@pytest.mark.gpu
def test_a_call_wrong_only_in_a_cuda_graph_is_caught(tmp_path, monkeypatch):
    from mlpgen.space import heuristic_config

    spec = MLPSpec((256, 512, 256))
    cfg = heuristic_config(spec, 64)
    mod = candidate_module(spec, cfg, tmp_path)
    real = mod.mlp

    def wrong_in_a_graph(x, w, b=None):
        y = real(x, w, b)
        return y * 1.1 if torch.cuda.is_current_stream_capturing() else y

    monkeypatch.setattr(mod, "mlp", wrong_in_a_graph)
    m = measure_candidate(spec, 64, cfg, str(tmp_path))
    assert m.verdict == "wrong" and "in a CUDA-graph replay of mlp()" in m.reason, m
    monkeypatch.setattr(mod, "mlp", real)
    good = measure_candidate(spec, 64, cfg, str(tmp_path))
    assert good.ok and good.err <= 1, good


def test_kernel_free_candidates_each_get_a_module_with_their_path(tmp_path):
    """The torch path and the cuBLASLt epilogue both have no kernel source: the epilogue's
    candidate must not reuse the torch candidate's module, which carries no epilogue path."""
    spec = MLPSpec((64, 128, 32), act="gelu_tanh", dtype="bf16")
    for strategy in ("torch", "epilogue"):
        got = measure_candidate(spec, 16, KernelConfig(strategy=strategy), str(tmp_path))
        assert got.verdict == "ok", (strategy, got.reason)


def test_the_compile_pool_compiles_what_is_asked_for_first_and_nothing_else(tmp_path):
    """prefetch queues kernels for the pool; wait puts one at the head of the queue and returns
    its compile error (None when it compiled); configs never asked for are never compiled."""
    configs = [KernelConfig(block_m=m, chunk=32) for m in (16, 32, 64)]
    t0 = time.monotonic()
    compiler = Compiler(SPEC, str(tmp_path), processes=1, fn=fake_compile)
    try:
        compiler.prefetch(configs[:1] + [KernelConfig(strategy="torch")])
        assert compiler.ready(KernelConfig(strategy="torch")) and not compiler.ready(configs[1])
        assert compiler.wait(configs[1]) is None  # not prefetched: compiled on demand
        assert compiler.ready(configs[1])
        assert compiler.wait(configs[2]).startswith("error: RuntimeError: out of resource")
        assert compiler.wait(configs[0]) is None
        assert compiler.wait(KernelConfig(strategy="torch")) is None  # no kernel: nothing
    finally:
        compiler.close()
    done = (tmp_path / "compiled").read_text().split()
    assert sorted(done) == ["16", "32"] and compiler.compiled() == 3
    assert list(compiler.errors) == [configs[2]]
    # three compiles of 0.2 s each (and the process's start) in the one process, each waited
    # for in turn: the waits cover the first two at least, the busy time all three
    elapsed = time.monotonic() - t0
    assert 0.6 <= compiler.busy_s <= elapsed and 0.4 <= compiler.waited_s <= elapsed


def test_settling_the_compile_pool_drops_its_queue_and_waits_for_the_compile_in_progress(tmp_path):
    """Before the decisions' timings the pool goes quiet: what is queued is dropped (and
    compiles again only if waited for), the compile in progress finishes first."""
    configs = [KernelConfig(block_m=m, chunk=32) for m in (16, 32)]
    compiler = Compiler(SPEC, str(tmp_path), processes=1, fn=fake_compile)
    try:
        compiler.prefetch(configs)
        deadline = time.monotonic() + 60
        while compiler.state[configs[0]] != "busy":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert compiler.settle() == 1
        assert compiler.ready(configs[0]) and not compiler.ready(configs[1])
        assert "busy" not in compiler.state.values() and not compiler.todo
        assert compiler.wait(configs[1]) is None  # dropped, then asked for: compiled now
    finally:
        compiler.close()
    assert (tmp_path / "compiled").read_text().split() == ["16", "32"]


def test_settling_waits_for_a_long_compile_only_so_long():
    """A compile in progress that runs on (near the compile limit) is not waited out."""
    compiler = Compiler(SPEC, "unused", processes=1, fn=endless_compile)
    try:
        compiler.prefetch([CFG])
        deadline = time.monotonic() + 60
        while compiler.state[CFG] != "busy":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        t0 = time.monotonic()
        assert compiler.settle(limit_s=0.5) == 0
        assert 0.5 <= time.monotonic() - t0 < 5 and compiler.state[CFG] == "busy"
    finally:
        compiler.close(graceful=False)


@pytest.mark.parametrize("shares", [True, False])
def test_a_pdl_variant_compiles_only_where_the_runtime_does_not_add_pdl(tmp_path, shares):
    """Where mlpgen.runtime launches the candidates, a config's PDL variant is its binary
    launched with PDL: waiting for it compiles the config once; on the public path, twice."""
    config = KernelConfig(block_m=16, chunk=32)
    compiler = Compiler(SPEC, str(tmp_path), processes=1, fn=fake_compile)
    compiler.shares_pdl = shares
    try:
        compiler.prefetch([replace(config, pdl=True)])
        assert compiler.wait(config) is None and compiler.wait(replace(config, pdl=True)) is None
        assert compiler.ready(replace(config, pdl=True))
    finally:
        compiler.close()
    assert compiler.compiled() == (1 if shares else 2)
    assert len((tmp_path / "compiled").read_text().split()) == compiler.compiled()
