"""Verify, then time, one candidate config, in a worker process with a time limit.

A candidate is built the way it ships: a module rendered by `emit.render` with the candidate's
TUNED entry, written to a work folder and imported; modules are cached per kernel source, so a
kernel compiled once serves every bucket and every launch-only variant. `measure_candidate`
runs inside a worker process (mlpgen.workers): a crash, an illegal memory access or a hang
costs that candidate only, and the worker is replaced.

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
import warnings
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from mlpgen.bench import build_sequential
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
