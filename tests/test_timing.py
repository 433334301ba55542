"""The one timing method (mlpgen.timing) with fake clocks and calls; its GPU part on a GPU."""

import time

import pytest
import torch

from mlpgen import timing


class FakeClock:
    """A clock that only the calls advance: each call costs the next of `costs` (µs), cycling."""

    def __init__(self, costs):
        self.now, self.costs, self.calls = 0.0, costs, 0

    def __call__(self):
        return self.now

    def call(self):
        self.now += self.costs[self.calls % len(self.costs)] * 1e-6
        self.calls += 1


def test_host_loops_are_sized_by_time_after_a_warm_up():
    clock = FakeClock([2.0])
    samples = timing.host_samples(clock.call, lambda: None, loop_s=1e-4, loops=3, clock=clock)
    assert samples == pytest.approx([2e-6] * 3)
    assert clock.calls == 1 + 2 + 3 * 50  # warm-up, sizing, three loops of 100 µs / 2 µs


def test_host_loops_take_at_least_one_call():
    clock = FakeClock([5000.0])  # a call slower than a loop (the interpreter)
    samples = timing.host_samples(clock.call, lambda: None, loop_s=1e-3, loops=2, clock=clock)
    assert samples == pytest.approx([5e-3] * 2) and clock.calls == 1 + 2 + 2


def test_median_and_spread():
    assert timing.median_spread([4.0]) == (4.0, 0.0)
    med, spread = timing.median_spread([1.0, 2.0, 3.0, 4.0, 5.0])
    assert med == 3.0 and spread == pytest.approx((4.0 - 2.0) / 3.0)


def test_time_call_reports_the_median_and_spread_of_its_loops():
    """Loops of one call each (loop_s=0) after three warm-up calls: 10, 30, 10, 1000 and 10 µs.
    The median ignores the outlier that a mean would report; the spread shows it."""
    clock = FakeClock([10.0, 10.0, 10.0, 10.0, 30.0, 10.0, 1000.0, 10.0])
    t = timing.time_call(clock.call, gpu=False, loop_s=0, loops=5, clock=clock)
    assert t.host_us == pytest.approx(10.0)
    assert t.host_spread == pytest.approx((30.0 - 10.0) / 10.0)
    assert t.gpu_us is None and t.gpu_spread is None


class SlowSpell:
    """One clock for several calls: call(us) costs us, three times that after the first
    `fast` calls (the host slowed down by another process, say)."""

    def __init__(self, fast):
        self.now, self.calls, self.fast = 0.0, 0, fast

    def __call__(self):
        return self.now

    def call(self, us):
        self.calls += 1
        self.now += us * (1 if self.calls <= self.fast else 3) * 1e-6


def test_interleaved_rounds_keep_the_ratio_through_a_slow_spell():
    """Two calls of 1 and 2 µs, the host three times slower from the 12th call on. Timed one
    after the other, the second call falls wholly in the slow spell: 6 times the first. In
    interleaved rounds both see the spell alike and keep their ratio of 2."""

    def ratio(rounds):
        clock = SlowSpell(fast=11)  # the first call's warm-up, sizing and eight loops
        calls = {"a": lambda: clock.call(1.0), "b": lambda: clock.call(2.0)}
        t = timing.time_calls(calls, False, rounds=rounds, loop_s=0, loops=8, clock=clock)
        return t["b"].host_us / t["a"].host_us

    assert ratio(1) == pytest.approx(6.0)
    assert ratio(4) == pytest.approx(2.0)


@pytest.mark.gpu
def test_gpu_time_leaves_out_the_hosts_launch():
    """A call that spends 300 µs on the host before its one small kernel: without the spin, the
    events around it would time the host. Kept busy over the launch, the GPU times the kernel
    (a few µs)."""
    x = torch.zeros(1024, device="cuda")

    def call():
        until = time.perf_counter() + 300e-6
        while time.perf_counter() < until:
            pass
        x.add_(1)

    t = timing.time_call(call, gpu=True, warmup_ms=5, rep_ms=20)
    assert t.host_us > 250, t
    assert t.gpu_us < 50, t


@pytest.mark.gpu
def test_gpu_time_of_back_to_back_calls_is_per_call():
    a = torch.randn(4096, 4096, device="cuda")
    one = timing.time_call(lambda: a @ a, gpu=True).gpu_us
    two = timing.time_call(lambda: (a @ a, a @ a), gpu=True).gpu_us
    assert 1.7 < two / one < 2.3, (one, two)


@pytest.mark.gpu
def test_a_call_slower_than_give_up_is_timed_once():
    """A ~2 ms call is timed once where it is over give_up_us (about its own length), and in
    full where it is not; the one call's time is its time."""
    cycles = int(timing.spin_cycles_per_us(torch.cuda.current_device()) * 2000)
    calls = []

    def call():
        calls.append(1)
        torch.cuda._sleep(cycles)

    rough = timing.time_call(call, gpu=True, give_up_us=500.0)
    assert rough.rough and 1500 < rough.gpu_us < 3000, rough
    once = len(calls)
    calls.clear()
    full = timing.time_call(call, gpu=True, give_up_us=50_000.0)
    assert not full.rough and full.gpu_us == pytest.approx(rough.gpu_us, rel=0.2)
    assert len(calls) > once + 30  # warm-up, sizing and at least five bursts of BURST calls


def test_a_long_call_is_timed_in_short_bursts_sized_from_one_call():
    """long_plan (the tuner's quick budget, measure.QUICK): a call of over long_us / BURST is
    timed in bursts of about long_us of calls after the one call that sized them, with a short
    spin; at least five samples. A shorter call keeps the bursts of BURST calls."""
    from mlpgen.measure import QUICK

    budget = (QUICK["warmup_ms"], QUICK["rep_ms"], QUICK["long_us"])
    # a 6.3 ms call (262144 rows of 1024,4096,1024): five calls alone, no warm-up burst; the
    # burst plan took 3 sizing bursts, one warm-up and five timed bursts of 8 calls: 72
    calls, spin_us, warm, n = timing.long_plan(6300.0, 6300.0, *budget)
    assert (calls, warm, n) == (1, 0, 5) and spin_us == timing.LONG_SPIN_US
    # 320 us (262144 rows of 256,512,256): bursts of 4 calls, one of them warm-up
    calls, spin_us, warm, n = timing.long_plan(320.0, 320.0, *budget)
    assert (calls, warm, n) == (4, 1, 5) and spin_us == timing.LONG_SPIN_US
    # a spin twice a burst's host time where that is shorter
    assert timing.long_plan(200.0, 30.0, *budget)[:2] == (5, 300.0)
    assert timing.long_plan(124.0, 124.0, *budget) is None
    # a host-bound call (a training step: 177 us of GPU work, 1 ms of host launches): the spin
    # outlasts the host's lead over the burst, so the GPU never waits for a launch
    calls, spin_us, _, n = timing.long_plan(177.0, 1000.0, *budget)
    assert calls == 6 and spin_us >= calls * 1000.0 - (calls - 1) * 177.0 and n == 5
    assert timing.long_plan(125.0, 125.0, *budget)[0] == timing.BURST


@pytest.mark.gpu
def test_a_long_call_timed_on_the_quick_budget_takes_few_calls_and_the_same_time():
    cycles = int(timing.spin_cycles_per_us(torch.cuda.current_device()) * 4000)
    calls = []

    def call():
        calls.append(1)
        torch.cuda._sleep(cycles)

    full = timing.time_call(call, gpu=True, loops=3, loop_s=0.002, warmup_ms=5, rep_ms=10)
    n_full = len(calls)
    calls.clear()
    quick = timing.time_call(
        call, gpu=True, loops=3, loop_s=0.002, warmup_ms=5, rep_ms=10, long_us=1000.0
    )
    assert quick.gpu_us == pytest.approx(full.gpu_us, rel=0.05), (quick, full)
    assert len(calls) <= 15 < n_full, (len(calls), n_full)


@pytest.mark.gpu
def test_a_host_bound_call_on_the_quick_budget_times_its_gpu_work_not_its_launches():
    """200 us of GPU work launched after 1 ms of host work (a training step's autograd): the
    quick budget's GPU time is the GPU work, as time_call's full budget measures it."""
    cycles = int(timing.spin_cycles_per_us(torch.cuda.current_device()) * 200)

    def call():
        start = time.perf_counter()
        while time.perf_counter() - start < 1e-3:
            pass
        torch.cuda._sleep(cycles)

    quick = timing.time_call(
        call, gpu=True, loops=3, loop_s=0.002, warmup_ms=5, rep_ms=10, long_us=1000.0
    )
    assert quick.host_us > 900 and quick.gpu_us == pytest.approx(200, rel=0.25), quick
