"""The search space: the strategies' domains, feasibility before compiling, and the per-bucket
candidate lists the tuner searches. Each strategy's own rules are tested in
tests/strategies/test_<strategy>.py."""

from dataclasses import replace

import pytest

from mlpgen import space
from mlpgen.space import (
    DEFAULT_BUCKETS,
    DOMAINS,
    configs_of,
    dominated_reason,
    heuristic_config,
    infeasible_reason,
    search_space,
)
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies import STRATEGIES

HEADLINE = MLPSpec((256, 512, 256))

# A fixed table for the tests of the space's logic (pinned with the pin_domains fixture), so
# that tuning the production domains changes none of what they check.
H200_SHARED = 232448  # the H200's opt-in shared memory per block (what the tuner passes there)
TABLE = {
    "rowblock": {
        "block_m": (16, 32, 64, 128),
        "chunk": (32, 64, 128),
        "num_warps": (2, 4, 8),
        "num_stages": (1,),
    },
    "persist": {
        "block_m": (16, 32, 64),
        "block_n": (32, 64),
        "block_k": (64,),
        "num_warps": (4,),
        "num_stages": (3,),
    },
    "stream": {
        "block_m": (16, 32),
        "block_n": (32,),
        "chunk": (32, 64),
        "num_warps": (4,),
        "num_stages": (3,),
    },
    "torch": {},
}


def table_size():
    return sum(len(configs_of(s)) for s in DOMAINS)


@pytest.mark.parametrize("widths", [(256, 512, 256), (100, 37, 10), (3, 5, 2), (784, 1024, 10)])
@pytest.mark.parametrize("bucket", DEFAULT_BUCKETS)
def test_every_table_config_is_a_candidate_or_dropped_with_a_reason(widths, bucket):
    spec = MLPSpec(widths)
    s = search_space(spec, bucket)
    assert len(s.candidates) + len(s.dropped) == table_size()
    assert not set(s.candidates) & {c for c, _ in s.dropped}
    assert all(reason for _, reason in s.dropped)
    assert sum(s.dropped_counts().values()) == len(s.dropped)
    assert KernelConfig(strategy="torch") in s
    assert heuristic_config(spec, bucket) in s
    for c in s.candidates:
        assert infeasible_reason(spec, c) is None
    # membership (a set, asked many times a search step) is exactly the candidate list, also
    # for an equal config built anew and for a space narrowed to a recorded one
    assert all(replace(c) in s for c in s.candidates)
    assert not any(c in s for c, _ in s.dropped)
    few = s.within(s.candidates[::2])
    assert [c for c in s.candidates if c in few] == list(s.candidates[::2])


def test_headline_space_sizes():
    """The production table for 256,512,256 fp16 with the H200's shared memory (the tuner
    passes the GPU's): 12 rowblock, 224 persist (block_m x block_n x warps x stages x
    last_block_n, last_block_n equal to block_n counted once as 0), 128 stream (64 of them with
    TMA), 24 split, epilogue and torch. 34
    cannot work: rowblock 64 rows x chunk 128 with 4 warps and stream's 128-row tiles with 4
    warps (registers, with and without TMA), persist's 128 x 256 with 4 warps (256
    accumulators per thread, 8 of them), stream's 128 x 64 with 3 stages and TMA's 128-row tiles
    with 4 warps (shared memory), epilogue (gelu); 16 are not searched (persist's last tiles
    wider than block_n) and neither are the TMA tiles but 128 rows with 8 warps and 2 stages;
    every other one is searched from 256 rows up, split only up to 4096 rows, TMA from 4096,
    persist's narrower last tiles up to 1024. A
    bucket of one row only searches 16-row tiles, of every row-tiled strategy."""

    def size(b):
        return len(search_space(HEADLINE, b, H200_SHARED).candidates)

    assert {b: size(b) for b in (1, 16, 64, 256, 262144)} == {
        1: 85,  # persist's 52 16-row tiles
        16: 85,
        64: 240,
        256: 290,
        262144: 132,  # persist's 62: no narrower last tiles
    }
    assert size(1024) == 290
    assert size(4096) == 156  # persist's narrower last tiles: over their 1024 rows
    assert size(8192) == 132  # split: over its 4096 rows
    one = search_space(HEADLINE, 1, H200_SHARED)
    assert {c.block_m for c in one.candidates if c.strategy != "torch"} == {16}
    assert {c.strategy for c in one.candidates} == {
        "rowblock",
        "persist",
        "stream",
        "split",
        "torch",
    }
    assert one.dropped_counts() == {
        "dominated": 239,  # with TMA's 34 tiles over 16 rows
        "shared memory": 8,
        "no epilogue": 1,  # gelu: cuBLASLt's GELU epilogue is the tanh approximation
        "registers": 27,  # cluster's 2: one-row tiles of 64-column slices with 2 warps
        # cluster's 14 and its 8 32-row tiles (clusters=True: test_cluster_candidates_only_...)
        "no clusters": 22,
        "not searched": 32,  # persist's last_block_n 64 over block_n 32; TMA's 16 16-row tiles
    }


def test_domains_feed_the_sampler(pin_domains, pin_heuristic):
    pin_domains(TABLE)
    pin_heuristic(KernelConfig(block_m=16, chunk=64, num_warps=4))  # a TABLE point
    doms = search_space(HEADLINE, 64, H200_SHARED).domains()
    assert doms["torch"] == {}
    assert doms["rowblock"]["block_m"] == (16, 32, 64)  # 128-row tiles: over the bucket
    assert doms["rowblock"]["chunk"] == (32, 64, 128)
    assert doms["persist"]["block_n"] == (32, 64) and doms["stream"]["chunk"] == (32, 64)
    for strategy in TABLE:
        assert list(doms[strategy]) == list(TABLE[strategy])  # the table's field order
    # the heuristic default is a candidate even outside the table: the sampler can draw it
    # (block_n 128 and 8 warps are no TABLE values for persist)
    outside = KernelConfig("persist", block_m=64, block_n=128, num_warps=8, num_stages=3)
    pin_heuristic(outside)
    assert outside not in configs_of("persist") and infeasible_reason(HEADLINE, outside) is None
    s = search_space(HEADLINE, 16384, H200_SHARED)
    assert outside in s and s.candidates.count(outside) == 1
    doms = s.domains()
    assert doms["persist"]["block_n"] == (32, 64, 128) and doms["persist"]["num_warps"] == (4, 8)
    for name, values in doms["persist"].items():
        assert getattr(outside, name) in values
    # ... and an infeasible default is not: it stays out of the space
    bad = KernelConfig("persist", block_m=128, block_n=256, num_warps=4, num_stages=3)
    pin_heuristic(bad)
    t = search_space(HEADLINE, 16384, H200_SHARED)
    assert bad not in t and set(t.candidates) == set(s.candidates) - {outside}


def test_wide_specs_drop_rowblock_and_search_persist_and_torch():
    """A width over MAX_FUSED_WIDTH does not fit the rowblock kernel's registers, but the
    persistent kernel stages hidden activations through global memory: no width limit."""
    spec = MLPSpec((2048, 16))
    s = search_space(spec, 64)
    assert {c.strategy for c in s.candidates} == {"persist", "torch"}
    assert KernelConfig(strategy="torch") in s and heuristic_config(spec, 64) in s
    assert heuristic_config(spec, 64).strategy == "persist"
    assert s.dropped_counts()["too wide"] == len(configs_of("rowblock"))
    assert all(space.reason_kind(r) == "too wide" for c, r in s.dropped if c.strategy == "rowblock")
    assert all("2 layers" in r for c, r in s.dropped if c.strategy == "stream")  # one layer
    deep = search_space(MLPSpec((784, 2048, 2048, 10)), 4096)
    assert {c.strategy for c in deep.candidates} == {"persist", "torch"}


def test_dominated_configs(pin_domains):
    pin_domains(TABLE)
    assert "rows" in dominated_reason(HEADLINE, KernelConfig(block_m=32), 16)
    assert dominated_reason(HEADLINE, KernelConfig(block_m=16), 1) is None
    assert dominated_reason(HEADLINE, KernelConfig(block_m=64), 33) is None  # 33 -> 64 rows
    persist = KernelConfig(strategy="persist", block_m=32, num_stages=3)
    assert "rows" in dominated_reason(HEADLINE, persist, 16)
    assert dominated_reason(HEADLINE, persist, 17) is None
    narrow = MLPSpec((3, 5, 2))  # every chunk >= 16 renders the same kernel
    assert "same kernel as chunk 32" in dominated_reason(narrow, KernelConfig(chunk=64), 64)
    assert dominated_reason(narrow, KernelConfig(chunk=32), 64) is None
    stream = KernelConfig(strategy="stream", block_m=16, chunk=64)
    assert "same kernel as chunk 32" in dominated_reason(narrow, stream, 64)
    assert dominated_reason(HEADLINE, KernelConfig(strategy="torch"), 1) is None


def test_a_domain_change_is_one_table_edit(monkeypatch):
    before = search_space(HEADLINE, 4096).candidates
    rows = [c for c in before if c.strategy == "rowblock"]
    rowblock = dict(DOMAINS["rowblock"], num_stages=(1, 2))
    monkeypatch.setitem(DOMAINS, "rowblock", rowblock)
    s = search_space(HEADLINE, 4096)
    assert rows and {c.num_stages for c in s.candidates if c.strategy == "rowblock"} == {1, 2}
    assert len(s.candidates) == len(before) + len(rows)  # every rowblock candidate, twice
    assert set(before) <= set(s.candidates)


def test_a_strategy_without_rules_is_left_to_verification(monkeypatch):
    monkeypatch.setitem(STRATEGIES, "rowblock", replace(STRATEGIES["rowblock"], rule=None))
    assert infeasible_reason(HEADLINE, KernelConfig(block_m=128, chunk=128, num_warps=2)) is None
