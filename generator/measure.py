"""Verify, then time, one candidate config, in a worker process with a time limit.

A candidate is built the way it ships: a module rendered by `emit.render` with the candidate's
TUNED entry, written to a work folder and imported; modules are cached per kernel source, so a
kernel compiled once serves every bucket and every launch-only variant. `measure_candidate`
runs inside a `Worker`: a spawned process (CUDA cannot fork) that answers one task at a time; a
crash, an illegal memory access or a hang costs that candidate only, and the worker is replaced.

Verification comes first and decides whether a candidate is timed at all (verify.check_run): two
random inputs, at the bucket's M and at an M that is not a multiple of BLOCK_M; every buffer
allocated NaN-poisoned (the output, rows past M that must stay untouched, hidden activations and
workspaces), and every element within the dtype's tolerance of the fp32 reference. The call
path that is timed (the module's mlp()) is checked as well (check_calls): three calls back to
back on three more inputs and, on a GPU, the replay of a CUDA graph of it.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import math
import multiprocessing
import os
import signal
import threading
import time
import warnings
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from mlpgen.bench import build_sequential
from mlpgen.children import die_with_parent
from mlpgen.emit import atomic_write, entry, render
from mlpgen.render import shared_kernels
from mlpgen.selfcheck import load_module
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies import STRATEGIES
from mlpgen.timing import spin_cycles_per_us, time_call
from mlpgen.verify import (
    Check,
    check,
    check_run,
    poisoned_allocations,
    random_problem,
    reference,
)

# buckets up to this size also get a per-call host time: on the H200 a call is still host-bound
# at 4096 rows (eager 45.6 us per call for 14.6 us of GPU work) and about even at 16384 (42.4 per
# call, 40.9 GPU); scored on GPU time alone, a winner of two launches a call ran 0.85x eager per
# call
HOST_BUCKET_MAX = 16384
ODD_OFFSET = 13  # bucket + 13 is not a multiple of any block_m >= 16

# The weight of the lesser of a call's two times in its score (Measurement.score). Host time and
# GPU time overlap imperfectly: at a host-bound bucket the GPU time still shows in a caller's
# time per call wherever the caller's own GPU work fills the gap, and a host time of a few µs,
# read to a few %, cannot rank configs whose GPU times differ by a µs. Scored by the larger time
# alone, the 64-wide spec's re-tune at 1024 rows took block_m 16 (host 6.74 us, GPU 4.75) over
# block_m 64 (host 6.93, GPU 3.52); a later per-call comparison measured it 38% slower than the
# block_m 64 table shipped before. A weight above 0.16 decides for block_m 64. Over the 41
# buckets with host times of the recorded trial logs (benchmarks/results/h200/exhaustive,
# tuned/*.trials.json) a weight from 0.2 to 0.3 changes 9 winners, each for at most 3.4% more of
# the larger time (the host time's noise) and 7 of them for 12-43% less GPU time; from 0.4 on it
# gives 8% of host time for 27% of GPU time, from 0.75 (1.0: no overlap) 26% for 40%. 0.2: the
# least of that range, since the replay (mlpgen.trials ablation) loses more with more weight:
# fewer of its searches end within 3% of the best at 0.25 than at 0.2.
HIDDEN_WEIGHT = 0.2

VERDICTS = ("ok", "wrong", "error", "timeout", "crash")


@dataclass(frozen=True)
class Measurement:
    """The verdict on one candidate at one bucket, and its times (µs) when it was verified.

    `score` is what the tuner minimises: the time per call that a caller issuing calls back to
    back waits, i.e. the larger of the GPU time and (for small buckets) the host time, both from
    `timing.time_call`, plus HIDDEN_WEIGHT times the smaller, the time that overlap hides
    imperfectly (so that among host-bound configs GPU time still counts)."""

    verdict: str
    reason: str = ""
    us: float | None = None  # median GPU time per call (timing.time_call)
    host_us: float | None = None  # median per-call host time, small buckets only
    err: float | None = None  # worst element's error over its tolerance (verify.check)
    spread: float | None = None  # the larger spread of the two times' samples (timing.Timing)
    # the torch path's candidate only: nn.Sequential's times on the same input, the eager
    # reference that a user compares with (the module's torch path is a candidate of its own)
    seq_us: float | None = None
    seq_host_us: float | None = None

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}")
        if self.verdict == "ok" and (self.us is None or not math.isfinite(self.us)):
            raise ValueError("an ok measurement needs a finite time")

    @property
    def ok(self) -> bool:
        return self.verdict == "ok"

    @property
    def score(self) -> float | None:
        if not self.ok:
            return None
        if self.host_us is None:
            return self.us
        return max(self.us, self.host_us) + HIDDEN_WEIGHT * min(self.us, self.host_us)

    def times(self, prefix: str = "") -> dict:
        """The measured times as TUNED-cell fields: us, and host_us where it was measured."""
        out = {f"{prefix}us": self.us}
        if self.host_us is not None:
            out[f"{prefix}host_us"] = self.host_us
        return out

    def eager_times(self) -> dict:
        """TUNED-cell fields eager_us (and eager_host_us) from a torch-path measurement:
        nn.Sequential's times, or where they were not measured (logs written before), the torch
        path's own."""
        if self.seq_us is None:
            return self.times("eager_")
        out = {"eager_us": self.seq_us}
        if self.seq_host_us is not None:
            out["eager_host_us"] = self.seq_host_us
        return out

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None and v != ""}

    @classmethod
    def from_dict(cls, d: dict) -> Measurement:
        names = ("verdict", "reason", "us", "host_us", "err", "spread", "seq_us", "seq_host_us")
        return cls(**{k: d[k] for k in names if k in d})


# ---------------------------------------------------------------------------------------------
# Candidates as shipped modules


_MODULES: dict[str, object] = {}


def candidate_module(spec: MLPSpec, config: KernelConfig, workdir: Path):
    """The module that ships `config` (TUNED["default"] holds only it), written under workdir
    and imported once per strategy and kernel source, without the torch.compile op that no
    measurement calls (emit.render's op=False). The same file is used by every process of one
    tuning run, so Triton's on-disk cache (keyed by kernel source and line) is shared. Configs
    whose kernels differ only in their constexpr tiles share one module: each gets its KERNELS
    entries added here, as a module rendered for it has them (a cluster config: mlpgen.runtime
    adds its kernel when a plan takes it)."""
    carried = config.has_kernel and not STRATEGIES[config.strategy].clusters
    sources, table = shared_kernels(spec, [config]) if carried else ([], {})
    # the strategy too: kernel-free strategies share an empty kernel source, and a module
    # carries only the torch-side paths (the cuBLASLt epilogue) its own table names
    source = "\n".join([spec.name, config.strategy, *sources])
    digest = hashlib.sha256(source.encode()).hexdigest()
    mod = _MODULES.get(digest)
    if mod is None:
        path = Path(workdir) / f"cand_{digest[:16]}.py"
        if not path.exists():
            atomic_write(path, render(spec, {"default": {1: entry(config)}}, {}, op=False))
        mod = _MODULES[digest] = load_module(path)
    for name, (function, tiles) in table.items():
        mod.KERNELS.setdefault(name, (getattr(mod, function), tiles))
    return mod


def hot_path(mod, config: KernelConfig, x, weights, biases):
    """fn() -> y: the candidate module's mlp() on x, the call a user makes, serving `config`
    at every M: through the plan and, where the strategy has one, the lane that the first call,
    made here, opens. A module serves every launch variant of its kernel, so its dispatch state
    is reset to this config first. What is timed (under torch.no_grad(), as inference runs), so
    that host time is the per-call cost a user pays for this config."""
    mod.TUNED = {"default": {1: entry(config)}}
    mod._forget_dispatch()
    with warnings.catch_warnings():  # no table for this GPU, by design
        warnings.simplefilter("ignore")
        mod.mlp(x, weights, biases)
    return lambda: mod.mlp(x, weights, biases)


def launcher(mod, config: KernelConfig):
    """fn(x, weights, biases, out=None) -> y: exactly what the module runs for this config
    (verification: with out, the kernel writes into it where it can)."""
    cell = entry(config)
    return lambda x, w, b, out=None: mod._launch(x, w, b, cell, out=out)


# ---------------------------------------------------------------------------------------------
# Verification and timing (inside the worker)


def verify_sizes(bucket: int, config: KernelConfig) -> tuple[int, int]:
    """The two M a candidate is checked at: the bucket's own and, when that is a multiple of
    BLOCK_M, one that is not (else the bucket's M again, on another input)."""
    m = max(bucket, 1)
    return (m, m) if m % config.block_m else (m, m + ODD_OFFSET)


def fresh_workspaces(mod) -> None:
    """Drop the module's cached workspaces, so that the next launch allocates them afresh (under
    verify.poisoned_allocations: NaN) instead of reusing what an earlier candidate left."""
    getattr(mod, "_WORKSPACES", {}).clear()  # the public path's, and mlpgen.runtime's plans


# The fp32 references of the verification inputs, kept between candidates: every candidate of
# a bucket is checked on the same inputs (their seeds are the bucket's), and at large M the
# reference's fp32 GEMMs cost more than the candidate's checks and timing together (262144 rows
# of 1024,4096,1024: ~90 ms each, six a candidate). At most REFERENCE_SHARE of the GPU's memory
# (least recently used out first); a reference is used again only where its float64 sum is the
# one it had when computed, so that a candidate writing out of its bounds cannot spoil a later
# candidate's verdict.
REFERENCE_SHARE = 0.125
_REFERENCES: collections.OrderedDict = collections.OrderedDict()  # key -> (reference, its sum)


def reference_budget(device) -> int:
    """Bytes of references a worker keeps (a CPU: 256 MiB)."""
    if torch.device(device).type != "cuda":
        return 256 << 20
    return int(REFERENCE_SHARE * torch.cuda.get_device_properties(device).total_memory)


def kept_reference(spec: MLPSpec, key: tuple, x, weights, biases) -> torch.Tensor:
    """reference(spec, x, weights, biases), kept under `key` (which names the problem: its M,
    device and seeds) for the next candidate checked on the same problem."""
    key = (spec, *key)
    hit = _REFERENCES.get(key)
    if hit is not None:
        ref, total = hit
        if float(ref.sum(dtype=torch.float64)) == total:
            _REFERENCES.move_to_end(key)
            return ref
        del _REFERENCES[key]
    ref = reference(spec, x, weights, biases)
    size = ref.numel() * ref.element_size()
    budget = reference_budget(ref.device)
    if size <= budget:
        held = sum(r.numel() * r.element_size() for r, _ in _REFERENCES.values())
        while _REFERENCES and held + size > budget:
            old, _ = _REFERENCES.popitem(last=False)[1]
            held -= old.numel() * old.element_size()
        _REFERENCES[key] = (ref, float(ref.sum(dtype=torch.float64)))
    return ref


def check_calls(mod, config: KernelConfig, spec: MLPSpec, m: int, device, seed: int):
    """The call path that is timed (the module's mlp(), hot_path), checked on a first input, on
    two more in calls back to back with no wait between them (PDL lets a call start before the
    previous one ends: a race between them shows here), and on a GPU in the replay of a CUDA
    graph on new input; all with poisoned allocations. Returns (the failed or worst Check, the
    call bound to the first input, that problem)."""
    x, weights, biases = random_problem(spec, m, device, seed)
    more = [random_problem(spec, m, device, seed + i)[0] for i in (1, 2, 3)]
    seeds = {id(u): (seed + i, seed) for i, u in enumerate([x, *more])}  # (x's, weights')
    with poisoned_allocations():
        fresh_workspaces(mod)
        call = hot_path(mod, config, x, weights, biases)
        runs = [(call(), x)] + [(mod.mlp(u, weights, biases), u) for u in more[:2]]
        runs = [(f"through mlp(), call {i + 1} of 3 back to back", *r) for i, r in enumerate(runs)]
        graph = None
        if torch.device(device).type == "cuda":
            y, graph = graph_replay(mod, x, more[2], weights, biases)
            runs.append(("in a CUDA-graph replay of mlp()", y, more[2]))
        worst = Check(True, 0.0)
        for where, y, inp in runs:
            key = (m, str(device), *seeds[id(inp)])
            result = check(y, kept_reference(spec, key, inp, weights, biases), spec.dtype)
            if not result.ok:
                failed = replace(result, reason=f"{result.reason} {where} at M={m}")
                return failed, call, (x, weights, biases)
            worst = max(worst, result, key=lambda c: c.err)
        del graph
    return worst, call, (x, weights, biases)


def graph_replay(mod, x, new_x, weights, biases):
    """(output, graph): mlp() captured in a CUDA graph on a copy of x (warmed up on a side
    stream first, as PyTorch prescribes), replayed once on new_x."""
    static = x.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        mod.mlp(static, weights, biases)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = mod.mlp(static, weights, biases)
    static.copy_(new_x)
    graph.replay()
    return y, graph


# The search's own measurements (quick): a quarter of timing.time_call's GPU budget and fewer,
# shorter host loops (~30 ms a candidate instead of ~70 ms, still medians of tens of bursts);
# a call of over 125 us is timed in bursts of about 1 ms sized from one call (timing.long_plan:
# at 262144 rows of 1024,4096,1024 some 6 calls a candidate instead of 72); the best few are
# re-measured on the DECIDE budget before anything is decided (decide.recheck).
QUICK = {"loops": 3, "loop_s": 0.002, "warmup_ms": 5, "rep_ms": 10, "long_us": 1000.0}
# The re-measurements decisions rest on: time_call's host loops, half its GPU budget (hundreds
# of bursts of a call of a few µs, and the decision takes the median of several such
# measurements, interleaved), and a long call in bursts of about 1 ms, as QUICK times it
# (time_call's bursts of 8 calls, spun up to 20 ms each, cost 0.4 s a measurement at 262144
# rows of 784,1024,1024,10 fp32).
DECIDE = {"warmup_ms": 5, "rep_ms": 20, "long_us": 1000.0}


# The search stops timing a candidate whose single call takes over GIVE_UP times the best score
# its bucket has measured so far (WorkerMeasure): it cannot win, and timing a slow candidate
# of a large bucket whole (tens of calls of up to 100 ms) would cost seconds.
GIVE_UP = 2.0


def timed(
    call, cuda: bool, host: bool, quick: bool = False, give_up_us: float | None = None
) -> tuple[float, float | None, float, bool]:
    """(GPU time, host time if `host` else None, the larger spread of the two, whether the GPU
    time is one call's: over give_up_us) of `call` by timing.time_call on the QUICK budget (with
    `quick`) or the DECIDE one; on a CPU (the interpreter) a rough host time, enough to exercise
    the tuner, stands in for the GPU time."""
    if cuda:
        t = time_call(call, gpu=True, give_up_us=give_up_us, **(QUICK if quick else DECIDE))
        us, spread = t.gpu_us, t.gpu_spread
    else:
        t = time_call(call, gpu=False, loop_s=0, loops=3)
        us, spread = t.host_us, t.host_spread
    if not host:
        return us, None, spread, t.rough
    return us, t.host_us, max(spread, t.host_spread), t.rough


def gave_up(give_up_us: float) -> str:
    """The reason an ok Measurement carries where its GPU time is one call's."""
    return f"timed once: over {give_up_us:.1f} us, {GIVE_UP:g}x the bucket's best so far"


class WorkerStartError(RuntimeError):
    """No worker process could be started: nothing can be measured, so tuning stops."""


class WorkerPoisoned(RuntimeError):
    """The CUDA context is broken (e.g. an illegal memory access): the worker must be replaced."""


def cuda_healthy() -> bool:
    try:
        torch.zeros(1, device="cuda").add_(1)
        torch.cuda.synchronize()
        return True
    except Exception:
        return False


def measure_candidate(
    spec: MLPSpec,
    bucket: int,
    config: KernelConfig,
    workdir: str,
    seed: int = 0,
    quick=False,
    give_up_us: float | None = None,
    verified: bool = False,
) -> Measurement:
    """Verify `config` at `bucket` and, if right, time it (`quick`: on the QUICK budget, the
    search's; give_up_us: see GIVE_UP; `verified`: a re-measurement of a config this bucket
    has verified, timed without checking it again). Runs in a worker; on a CPU (tests, the
    Triton interpreter) the GPU time is replaced by the host time."""
    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    try:
        mod = candidate_module(spec, config, Path(workdir))
        run = launcher(mod, config)
        worst = 0.0
        for i, m in enumerate(() if verified else verify_sizes(bucket, config)):
            fresh_workspaces(mod)  # two inputs, fresh buffers
            s = seed * 7919 + bucket * 31 + i
            kept = functools.partial(kept_reference, spec, (m, device, s, s))
            result = check_run(run, spec, m, device, seed=s, reference_of=kept)
            if not result.ok:
                return Measurement("wrong", result.reason, err=result.err)
            worst = max(worst, result.err)
        m = max(bucket, 1)
        with torch.no_grad():
            if verified:
                x, weights, biases = random_problem(spec, m, device, seed * 7919 + bucket * 31 + 2)
                call = hot_path(mod, config, x, weights, biases)
                worst = None
            else:
                result, call, (x, weights, biases) = check_calls(
                    mod, config, spec, m, device, seed=seed * 7919 + bucket * 31 + 2
                )
                if not result.ok:
                    return Measurement("wrong", result.reason, err=result.err)
                worst = max(worst, result.err)
            host = bucket <= HOST_BUCKET_MAX
            us, host_us, spread, rough = timed(call, cuda, host, quick, give_up_us)
            seq = {}
            if config.strategy == "torch":
                model = build_sequential(spec, weights, biases)
                seq_us, seq_host_us, *_ = timed(lambda: model(x), cuda, host, quick)
                seq = {"seq_us": seq_us, "seq_host_us": seq_host_us}
        reason = gave_up(give_up_us) if rough else ""
        return Measurement("ok", reason, us=us, host_us=host_us, err=worst, spread=spread, **seq)
    except Exception as e:
        if cuda and not cuda_healthy():
            raise WorkerPoisoned(describe(e)) from e
        return Measurement("error", describe(e))


def warm_up() -> None:
    """What a measuring worker's first candidate would otherwise pay for on the search's clock:
    the CUDA context, cuBLAS's handle and the GPU spin's calibration (timing.gpu_samples). Runs
    while the worker starts (Worker's `warm`), overlapping the first kernels' compiles."""
    if not torch.cuda.is_available():
        return
    a = torch.ones(64, 64, device="cuda", dtype=torch.float16)
    (a @ a).float().sum().item()
    spin_cycles_per_us(torch.cuda.current_device())


def compile_candidate(spec: MLPSpec, config: KernelConfig, workdir: str) -> None:
    """Compile (and run once, at M=1) a candidate's kernel, filling Triton's on-disk cache."""
    if not config.has_kernel:
        return
    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    run = launcher(candidate_module(spec, config, Path(workdir)), config)
    x, weights, biases = random_problem(spec, 1, device, seed=0)
    try:
        run(x, weights, biases)
        if cuda:
            torch.cuda.synchronize()
    except Exception as e:
        if cuda and not cuda_healthy():
            raise WorkerPoisoned(describe(e)) from e
        raise


def describe(e: BaseException) -> str:
    """One line: the exception's class and the first non-empty line of its message."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    text = f"{type(e).__name__}: {lines[0] if lines else ''}".rstrip(": ")
    return text[:300]


# ---------------------------------------------------------------------------------------------
# Worker processes


def visible_device(index: int) -> str:
    """What CUDA_VISIBLE_DEVICES must say for a child to see this process's GPU `index`."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        names = [v.strip() for v in visible.split(",") if v.strip()]
        if index < len(names):
            return names[index]
    return str(index)


def _serve(conn, fn, device: str | None, parent: int, warm=None) -> None:
    """Answer tasks with (status, value, alive); alive=False tells the parent that this process
    exits after the answer, so it replaces the worker instead of racing a dying process.
    `warm()` runs before the process says it is ready (a failure there is left to the tasks)."""
    if device is not None:  # before anything initialises CUDA in this process
        os.environ["CUDA_VISIBLE_DEVICES"] = device
    os.setpgrp()  # our own process group: a kill on timeout also reaches ptxas and other children
    die_with_parent(parent)  # and a killed tuner takes its workers (and their group) along
    if warm is not None:
        try:
            warm()
        except Exception:
            pass
    conn.send(("ready", None, True))
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        alive = True
        try:
            status, value = "ok", fn(*task)
        except WorkerPoisoned as e:
            status, value, alive = "error", f"{e} (CUDA context lost; worker replaced)", False
        except Exception as e:
            status, value = "error", describe(e)
        if alive and torch.cuda.is_initialized() and not cuda_healthy():
            alive = False  # a broken CUDA context fails every later task: let the parent replace us
        conn.send((status, value, alive))
        if not alive:
            return


def exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            pass
    return f"exit code {code}"


class Worker:
    """A spawned process that runs `fn(*task)` for one task at a time under a time limit.

    `run` returns (status, value): ("ok", fn's result), or ("error" | "timeout" | "crash",
    one line). A worker that hangs is killed and one that dies is replaced on the next task.
    `fn` (and `warm`, run in the process before its first task) must be importable by name (a
    module-level function): spawn pickles it by reference. A process starts on the first task,
    or earlier with `launch`, which does not wait for it: its imports (seconds of them) and
    `warm` then overlap the caller's work up to the first task.
    """

    def __init__(
        self,
        fn,
        limit_s: float = 60.0,
        device: int | None = None,
        startup_s: float = 300.0,
        warm=None,
    ):
        self.fn, self.limit_s, self.device, self.startup_s = fn, limit_s, device, startup_s
        self.warm = warm
        self.proc = self.conn = None
        self.ready = False  # the process said it is ready (it was started by launch or _start)
        self.restarts = 0

    def launch(self) -> None:
        """Start the process now, unless it is running; the next `run` waits until it is ready."""
        if self.proc is None:
            self._spawn()

    def _spawn(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        device = None if self.device is None else visible_device(self.device)
        args = (child, self.fn, device, os.getpid(), self.warm)
        proc = ctx.Process(target=_serve, args=args, daemon=True)
        try:
            proc.start()
        except Exception as e:
            parent.close()
            raise WorkerStartError(f"cannot start a worker process: {describe(e)}") from e
        finally:
            child.close()
        self.proc, self.conn, self.ready = proc, parent, False

    def _await_ready(self) -> None:
        if not self.conn.poll(self.startup_s):
            self._stop()
            raise WorkerStartError(f"a worker process did not start within {self.startup_s:g}s")
        try:
            self.conn.recv()
        except (EOFError, OSError):
            code = self._stop()
            raise WorkerStartError(f"a worker process died starting ({exit_text(code)})") from None
        self.ready = True

    def _start(self) -> None:
        self._spawn()
        self._await_ready()

    def _stop(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.is_alive():
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # the worker and what it started
            except OSError:  # not yet its own group leader, or already gone
                self.proc.kill()
        self.proc.join(10)
        code = self.proc.exitcode
        self.conn.close()
        self.proc = self.conn = None
        self.ready = False
        return code

    def run(self, *task, limit_s: float | None = None) -> tuple[str, object]:
        limit = self.limit_s if limit_s is None else limit_s
        if self.proc is not None and not self.proc.is_alive():
            self._stop()
            self.restarts += 1
        if self.proc is None:
            self._start()
        elif not self.ready:  # launched ahead: wait for its start-up to end
            self._await_ready()
        try:
            self.conn.send(task)
            if not self.conn.poll(limit):
                self._stop()
                self.restarts += 1
                return "timeout", f"no answer within {limit:g}s (hang?); worker replaced"
            status, value, alive = self.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            code = self._stop()
            self.restarts += 1
            return "crash", f"worker died ({exit_text(code)}); worker replaced"
        if not alive:
            self._stop()
            self.restarts += 1
        return status, value

    def close(self, graceful: bool = True) -> None:
        """End the process: asked to exit and given 5 s for it, or (not graceful) killed at
        once, which a process holding nothing to save takes in a fraction of the second its
        interpreter and CUDA context take to shut down."""
        if graceful and self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send(None)
                self.proc.join(5)
            except OSError:
                pass
        self._stop()

    def kill(self) -> None:
        """SIGKILL the process and its group now. Safe from another thread than the one using
        the worker: that one sees the process die and replaces it or closes it, as after a crash."""
        proc = self.proc
        if proc is None or proc.pid is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:  # not yet its own group leader, or already gone
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except OSError:
                pass

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def as_measurement(status: str, value) -> Measurement:
    if status == "ok":
        return value if isinstance(value, Measurement) else Measurement.from_dict(value)
    return Measurement(status if status in VERDICTS else "error", str(value))


def runtime_launches() -> bool:
    """Whether the candidates' modules launch through mlpgen.runtime (its direct launch supports
    the installed triton, and MLPGEN_RUNTIME is not 0)."""
    from mlpgen.runtime.versions import unsupported

    return os.environ.get("MLPGEN_RUNTIME") != "0" and unsupported("direct") is None


# A kernel that takes longer than this to compile is dropped as a candidate: some kernels of wide
# fp32 specs (784,1024,1024,10) compile for many minutes, while the headline's compile in seconds.
COMPILE_LIMIT_S = 60.0
# Before the decisions' timings the pool settles (Compiler.settle): the compiles in progress are
# waited for this long at most (most take seconds; one near COMPILE_LIMIT_S is not waited out)
SETTLE_S = 10.0


class Compiler:
    """Compiles kernel configs in a pool of worker processes, only those the tuner will measure
    and just ahead of it: `prefetch` queues configs (the search's next candidates), `wait`
    puts one at the head of the queue and blocks until it is compiled. Compiling is CPU-bound
    and Triton keeps the result on disk, so the measuring worker only loads it. A failure
    (compile error, over `limit_s`) is recorded as the config's reason, never fatal. Where
    mlpgen.runtime launches the candidates, a PDL variant is its config's binary launched with
    PDL (lanes.Linked), so only the config compiles."""

    def __init__(
        self,
        spec: MLPSpec,
        workdir: str,
        processes: int,
        limit_s: float = COMPILE_LIMIT_S,
        device: int | None = None,
        fn=None,
        on_done=None,
    ):
        self.spec, self.workdir, self.limit_s, self.device = spec, workdir, limit_s, device
        self.fn = compile_candidate if fn is None else fn
        self.on_done = on_done
        self.todo: collections.deque = collections.deque()
        self.state: dict[KernelConfig, str | None] = {}  # config -> "queued", "busy", "done"
        self.errors: dict[KernelConfig, str] = {}
        self.busy_s = 0.0  # seconds the compiling processes spent, summed over them
        self.waited_s = 0.0  # seconds `wait` blocked: what compiling added to the search
        self.fatal: WorkerStartError | None = None  # a compiling process could not start
        self.shares_pdl = runtime_launches()
        self.cond = threading.Condition()
        self.closed = False
        self.graceful = True  # how close ends the processes
        self.workers: list[Worker] = []  # one per thread, once it runs
        self.threads = [
            threading.Thread(target=self._drive, daemon=True) for _ in range(max(1, processes))
        ]
        for t in self.threads:
            t.start()

    def binary(self, config):
        """The config whose compile `config` runs: without PDL where the runtime adds it."""
        linked = self.shares_pdl and getattr(config, "pdl", False)
        return replace(config, pdl=False) if linked else config

    def prefetch(self, configs) -> None:
        with self.cond:
            for c in dict.fromkeys(map(self.binary, configs)):
                if c.has_kernel and c not in self.state:
                    self.state[c] = "queued"
                    self.todo.append(c)
            self.cond.notify_all()

    def wait(self, config: KernelConfig) -> str | None:
        """Compile `config` first if it is not yet; its compile error, or None."""
        if not config.has_kernel:
            return None
        config = self.binary(config)
        t0 = time.monotonic()
        with self.cond:
            if self.state.get(config) == "queued":
                self.todo.remove(config)
            if self.state.get(config) in (None, "queued"):
                self.state[config] = "queued"
                self.todo.appendleft(config)
                self.cond.notify_all()
            while self.state[config] != "done":
                if self.fatal is not None:  # nothing may ever compile it: stop the run
                    raise self.fatal
                self.cond.wait()
            self.waited_s += time.monotonic() - t0
            return self.errors.get(config)

    def _drive(self) -> None:
        worker = Worker(self.fn, self.limit_s, self.device)
        with self.cond:
            self.workers.append(worker)
        try:
            while True:
                with self.cond:
                    while not self.todo and not self.closed:
                        self.cond.wait()
                    if self.closed:
                        return
                    config = self.todo.popleft()
                    self.state[config] = "busy"
                t0 = time.monotonic()
                try:
                    status, value = worker.run(self.spec, config, self.workdir)
                except WorkerStartError as e:
                    with self.cond:
                        self.fatal = e
                        self.cond.notify_all()
                    return
                with self.cond:
                    self.busy_s += time.monotonic() - t0
                    if status != "ok" and not self.closed:  # not one killed by close
                        self.errors[config] = f"{status}: {value}"
                    self.state[config] = "done"
                    self.cond.notify_all()
                if self.on_done is not None:
                    self.on_done(config, status)
        finally:
            worker.close(self.graceful)

    def settle(self, limit_s: float = SETTLE_S) -> int:
        """Drop the queued compiles (the search that asked for them is over) and wait for those
        in progress, `limit_s` at most (a compile that runs on has most of its time behind it):
        host timings taken now are not slowed by compiling processes beside them. A dropped
        config compiles again if it is waited for. Returns how many were dropped."""
        deadline = time.monotonic() + limit_s
        with self.cond:
            dropped = len(self.todo)
            for config in self.todo:
                del self.state[config]
            self.todo.clear()
            while "busy" in self.state.values() and self.fatal is None and not self.closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.cond.wait(left)
            return dropped

    def ready(self, config: KernelConfig) -> bool:
        """Whether a wait for `config` would return at once (compiled, failed, or no kernel)."""
        with self.cond:
            return not config.has_kernel or self.state.get(self.binary(config)) == "done"

    def compiled(self) -> int:
        return sum(1 for v in self.state.values() if v == "done")

    def close(self, graceful: bool = True) -> None:
        """Stop the pool: each process ends after its compile in progress (not graceful: is
        killed, in progress or not; Triton writes its cache files whole or not at all)."""
        with self.cond:
            self.closed = True
            self.graceful = graceful
            self.cond.notify_all()
            workers = list(self.workers)
        if not graceful:
            for w in workers:
                w.kill()
        for t in self.threads:
            t.join(30)


@dataclass
class WorkerMeasure:
    """`measure(bucket, config) -> Measurement` for the tuner: candidates of one spec run in a
    worker bound to one GPU, each compiled first by the shared `compiler` (configs whose compile
    failed are not run); `prefetch` hands the search's next candidates to the compiler."""

    spec: MLPSpec
    workdir: str
    device: int | None = None
    limit_s: float = 60.0
    seed: int = 0
    compiler: Compiler | None = None
    fn: object = measure_candidate
    warm: object = None  # run by the worker as it starts (Worker's `warm`): warm_up
    # time on the QUICK budget (the search's measurements); tune.search turns it off for the
    # re-measurements its decisions rest on
    quick: bool = False

    # The search drives this measure from `drivers` threads (tune.search), which take turns
    # on the worker: a measurement is mostly a wait on another process, and one driver's
    # sampler and storage work between two measurements (about as long as a quick
    # measurement) runs while the other driver's candidate is measured.
    drivers = 2

    def __post_init__(self) -> None:
        self.worker = Worker(self.fn, self.limit_s, self.device, warm=self.warm)
        self.best: dict[int, float] = {}  # bucket -> best score of its quick measurements
        self.turn = threading.Lock()  # one candidate on the GPU at a time

    def launch(self) -> None:
        """Start the measuring process now (Worker.launch): it imports, opens its CUDA context
        and warms up while the first kernels compile, instead of at the first measurement."""
        self.worker.launch()

    def prefetch(self, configs) -> None:
        if self.compiler is not None:
            self.compiler.prefetch(configs)

    def settle(self) -> None:
        """Before the decisions' timings: no compile runs beside them (Compiler.settle)."""
        if self.compiler is not None:
            self.compiler.settle()

    def ready(self, config: KernelConfig) -> bool:
        """Whether measuring `config` would start at once (its kernel is compiled)."""
        return self.compiler is None or self.compiler.ready(config)

    def __call__(self, bucket: int, config: KernelConfig, verified: bool = False) -> Measurement:
        if self.compiler is not None:
            error = self.compiler.wait(config)
            if error is not None:
                return Measurement("error", f"compile: {error}")
        best = self.best.get(bucket) if self.quick else None
        give_up = None if best is None else GIVE_UP * best
        task = (self.spec, bucket, config, self.workdir, self.seed, self.quick, give_up)
        task += (True,) if verified else ()
        with self.turn:
            m = as_measurement(*self.worker.run(*task))
        if self.quick and m.ok and m.score < self.best.get(bucket, math.inf):
            self.best[bucket] = m.score
        return m

    def again(self, bucket: int, config: KernelConfig) -> Measurement:
        """Time `config` at `bucket` again, where it was verified already (measure_candidate's
        `verified`): the re-measurements that decisions rest on (decide.recheck)."""
        return self(bucket, config, verified=True)

    def close(self, graceful: bool = True) -> None:
        self.worker.close(graceful)
