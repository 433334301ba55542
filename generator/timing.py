"""How long a call takes: the one timing method of the tuner and of `mlpgen bench`.

`time_call(call)` returns two numbers, each the median of its samples with their spread:

- host time: per-call time of loops of back-to-back calls, each loop ended by one synchronize,
  the loop sized to about `loop_s`. What a caller issuing calls back to back waits per call:
  the host's launch cost or the GPU's work, whichever is longer. A median rather than the least
  loop: the least hides calls that sometimes take longer (several kernels a call falling behind
  their host, a lane that is not always taken), and the spread says how far loops differed.
- GPU time: CUDA events around a burst of BURST back-to-back calls, divided by BURST; before
  each burst the L2 is flushed (as `triton.testing.do_bench` does) and the GPU is kept busy by a
  spin that outlasts the host's launch of the burst, so the host's launch cost never shows.

Why this GPU time and not the other two methods mlpgen had: `do_bench` on the call times the
host wherever a call's launches outlast its L2 flush (eager's call at batch 1: 39 us that way
against 12 us with the GPU kept busy); replaying a CUDA graph of the calls cannot time what is
not capturable (a graph's replay, torch.compile's graphs, a lane that refuses capture). Events
around a spun-up burst time any callable, with no capture; the burst keeps what a graph replay
measured well (calls back to back, so PDL's overlap of one call with the next counts, and the
flush and the spin are paid once per BURST calls rather than per call), and it costs no more
GPU time than the graph replay did, both being bounded by `rep_ms`.

`time_calls(calls, rounds=...)` times several calls this way in interleaved rounds, for
comparisons: `mlpgen bench` times its contenders at a batch size so.
"""

from __future__ import annotations

import functools
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

LOOP_S, LOOPS = 0.003, 5  # host time: loops of ~3 ms (hundreds of calls at ~10 us each)
WARMUP_MS, REP_MS = 10, 40  # GPU time: warm-up and measuring budget, as do_bench's
BURST = 8  # back-to-back calls between the events of one GPU-time sample
FLUSH_BYTES = 256 << 20  # what triton's do_bench zeroes to flush the L2 (larger than an L2)
SPIN_US = (20.0, 20000.0)  # the spin before a burst: twice the burst's host time, within these
# With gpu_samples' long_us (the tuner's quick budget): a call of at least long_us / BURST is
# timed in bursts of about long_us of calls, sized from one call instead of three full bursts,
# with a spin of at most LONG_SPIN_US. The spin only has to outlast the launch of a burst's
# first call (tens of µs; the others launch while the GPU runs the first), but twice a burst's
# host time, which for such a call is its GPU time, spun up to 20 ms a burst: nine bursts of a
# 6 ms call took 0.6 s where six samples of one call take 50 ms.
LONG_SPIN_US = 2000.0


@dataclass(frozen=True)
class Timing:
    """Median times per call in µs, and the spread of their samples (interquartile range over
    the median). gpu_us is None where there is no GPU."""

    host_us: float
    host_spread: float
    gpu_us: float | None = None
    gpu_spread: float | None = None
    # gpu_us is one call's time: it was over time_call's give_up_us, so nothing more was timed
    rough: bool = False


def median_spread(samples: Sequence[float]) -> tuple[float, float]:
    """(median, interquartile range / median) of the samples."""
    med = statistics.median(samples)
    if len(samples) < 2 or med <= 0:
        return med, 0.0
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return med, (q3 - q1) / med


def host_samples(
    call: Callable[[], object],
    sync: Callable[[], None],
    loop_s: float = LOOP_S,
    loops: int = LOOPS,
    clock: Callable[[], float] = time.perf_counter,
) -> list[float]:
    """Per-call seconds of `loops` loops of n back-to-back calls, each ended by one sync. One
    call warms up, two more size n so that a loop takes about loop_s (at least one call)."""
    call()
    sync()
    t0 = clock()
    for _ in range(2):
        call()
    sync()
    per = max((clock() - t0) / 2, 1e-9)
    n = max(1, min(10_000, round(loop_s / per)))
    samples = []
    for _ in range(loops):
        t0 = clock()
        for _ in range(n):
            call()
        sync()
        samples.append((clock() - t0) / n)
    return samples


@functools.cache
def spin_cycles_per_us(device_index: int) -> float:
    """torch.cuda._sleep's cycles per µs on this GPU, measured once."""
    import torch

    start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
    torch.cuda._sleep(10_000)
    start.record()
    torch.cuda._sleep(2_000_000)
    end.record()
    end.synchronize()
    return 2_000_000 / (start.elapsed_time(end) * 1e3)


def long_plan(
    one_us: float, host_us: float, warmup_ms: float, rep_ms: float, long_us: float
) -> tuple[int, float, int, int] | None:
    """For a call of one_us GPU time (one call timed) of at least long_us / BURST: (calls a
    burst, about long_us of them; the spin before each, µs; warm-up bursts for warmup_ms;
    bursts timed, as many as fit in rep_ms and at least 5). None for a shorter call.
    A host-bound call (host_us over one_us: a training step's autograd, say) launches slower
    than the GPU runs it, so the spin must outlast the host's lead over the whole burst, or the
    GPU would idle between calls and time the host."""
    if one_us * BURST < long_us:
        return None
    calls = min(BURST, math.ceil(long_us / one_us))
    spin_us = min(max(2 * calls * host_us, SPIN_US[0]), LONG_SPIN_US)
    if host_us > one_us:
        lead_us = calls * host_us - (calls - 1) * one_us  # when the burst's last launch is issued
        spin_us = max(spin_us, min(2 * lead_us, SPIN_US[1]))
    each_ms = (spin_us + calls * one_us) / 1e3
    return calls, spin_us, int(warmup_ms / each_ms), max(5, int(rep_ms / each_ms))


def gpu_samples(
    call: Callable[[], object],
    host_us: float,
    warmup_ms: float = WARMUP_MS,
    rep_ms: float = REP_MS,
    burst: int = BURST,
    give_up_us: float | None = None,
    long_us: float | None = None,
) -> list[float]:
    """Per-call µs of bursts of `burst` back-to-back calls between CUDA events, the L2 flushed
    and the GPU spun for twice the burst's host time before each; as many bursts (at least 5)
    as fit in rep_ms, after warm-up calls for warmup_ms. With give_up_us: first one call alone
    (flushed and spun up the same way); if it takes longer than that, its time is the only
    sample (a call that slow is timed for about its own length, not some fifty times it). With
    long_us: that call too, and a call it shows to be long is timed as long_plan says."""
    import torch

    flush = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")
    cycles = spin_cycles_per_us(torch.cuda.current_device())
    spin = int(cycles * min(max(2 * burst * host_us, SPIN_US[0]), SPIN_US[1]))

    def timed(start=None, end=None, calls=burst, spin=spin):
        flush.zero_()
        torch.cuda._sleep(spin)
        if start is not None:
            start.record()
        for _ in range(calls):
            call()
        if end is not None:
            end.record()

    events = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    if give_up_us is not None or long_us is not None:
        timed(*events, calls=1)
        events[1].synchronize()
        one = events[0].elapsed_time(events[1]) * 1e3
        if give_up_us is not None and one > give_up_us:
            return [one]
        plan = None if long_us is None else long_plan(one, host_us, warmup_ms, rep_ms, long_us)
        if plan is not None:
            calls, spin_us, warm, n = plan
            for _ in range(warm):
                timed(calls=calls, spin=int(cycles * spin_us))
            pairs = [[torch.cuda.Event(enable_timing=True) for _ in range(2)] for _ in range(n)]
            for start, end in pairs:
                timed(start, end, calls=calls, spin=int(cycles * spin_us))
            torch.cuda.synchronize()
            return [s.elapsed_time(e) * 1e3 / calls for s, e in pairs]
    events[0].record()
    for _ in range(3):  # how many bursts fit in rep_ms
        timed()
    events[1].record()
    torch.cuda.synchronize()
    each_ms = max(events[0].elapsed_time(events[1]) / 3, 1e-3)
    for _ in range(max(1, int(warmup_ms / each_ms))):
        timed()
    n = max(5, int(rep_ms / each_ms))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for start, end in zip(starts, ends):
        timed(start, end)
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1e3 / burst for s, e in zip(starts, ends)]


def time_call(call: Callable[[], object], gpu: bool, sync=None, **options) -> Timing:
    """The host time of `call` and, with `gpu`, its GPU time (see the module's docstring):
    time_calls for one call, in one round. `sync` waits for the device
    (torch.cuda.synchronize by default when `gpu`); options: time_calls' budget (loop_s, loops,
    warmup_ms, rep_ms), clock, give_up_us and long_us."""
    return time_calls({0: call}, gpu, sync, **options)[0]


def time_calls(
    calls: dict[object, Callable[[], object]],
    gpu: bool,
    sync: Callable[[], None] | None = None,
    rounds: int = 1,
    loop_s: float = LOOP_S,
    loops: int = LOOPS,
    warmup_ms: float = WARMUP_MS,
    rep_ms: float = REP_MS,
    clock: Callable[[], float] = time.perf_counter,
    give_up_us: float | None = None,
    long_us: float | None = None,
) -> dict[object, Timing]:
    """time_call's Timing of each of several calls, measured in `rounds` interleaved rounds:
    each round takes every call's host loops in turn (every other round in reverse order, so
    of two calls each goes first as often), then their GPU bursts, and each call's medians are
    over the samples of all rounds. A slow spell of the host (another process, a clock change)
    then falls on every call alike, and the ratios between the calls hold where each call's own
    time drifts. A round takes ceil(loops / rounds) loops and rep_ms / rounds of GPU bursts.
    give_up_us: a call whose GPU time is over it is timed once (Timing.rough): the tuner's way
    of not spending seconds on a candidate already known to lose. long_us: a long call is timed
    in shorter bursts sized from one call (long_plan), the tuner's quick budget."""
    if sync is None:
        import torch

        sync = torch.cuda.synchronize if gpu else (lambda: None)
    host = {k: [] for k in calls}
    device = {k: [] for k in calls}
    per_round = math.ceil(loops / rounds)
    for r in range(rounds):
        order = list(calls) if r % 2 == 0 else list(calls)[::-1]
        for k in order:
            host[k] += host_samples(calls[k], sync, loop_s, per_round, clock)
        if not gpu:
            continue
        for k in order:
            if device[k] and give_up_us is not None and len(device[k]) == 1:
                continue  # timed once, over give_up_us: rough
            host_us = statistics.median(host[k]) * 1e6
            device[k] += gpu_samples(
                calls[k], host_us, warmup_ms, rep_ms / rounds, give_up_us=give_up_us,
                long_us=long_us,
            )  # fmt: skip
    times = {}
    for k in calls:
        host_med, host_spread = median_spread(host[k])
        if not gpu:
            times[k] = Timing(host_med * 1e6, host_spread)
            continue
        gpu_us, gpu_spread = median_spread(device[k])
        rough = give_up_us is not None and len(device[k]) == 1
        times[k] = Timing(host_med * 1e6, host_spread, gpu_us, gpu_spread, rough)
    return times
