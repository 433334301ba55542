"""The search space: one table of per-strategy domains, feasibility before compiling, and the
per-bucket candidate lists the tuner searches."""

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

HEADLINE = MLPSpec((256, 512, 256))


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


def test_headline_space_sizes():
    """256,512,256 fp16: 22 of 36 rowblock configs fit the register file; a bucket of one row
    only searches 16-row tiles."""
    sizes = {b: len(search_space(HEADLINE, b).candidates) for b in (1, 16, 64, 256, 262144)}
    assert sizes == {1: 9, 16: 9, 64: 21, 256: 23, 262144: 23}
    one = search_space(HEADLINE, 1)
    assert {c.block_m for c in one.candidates if c.strategy == "rowblock"} == {16}
    assert one.dropped_counts() == {"dominated": 14, "registers": 14}


def test_domains_feed_the_sampler():
    doms = search_space(HEADLINE, 64).domains()
    assert doms["torch"] == {}
    assert doms["rowblock"]["block_m"] == (16, 32, 64)
    assert doms["rowblock"]["chunk"] == (32, 64, 128)
    assert list(doms["rowblock"]) == list(DOMAINS["rowblock"])


def test_wide_specs_search_only_the_torch_path():
    s = search_space(MLPSpec((2048, 16)), 64)
    assert s.candidates == (KernelConfig(strategy="torch"),)
    assert s.dropped_counts() == {"too wide": table_size() - 1}


def test_feasibility_reasons():
    cfg = KernelConfig(block_m=16, chunk=32, num_warps=4)
    assert "dots" in infeasible_reason(MLPSpec((1024, 1024, 1024)), cfg)
    big = KernelConfig(block_m=128, chunk=64, num_warps=2)
    assert "registers" in infeasible_reason(HEADLINE, big)
    assert "shared memory" in infeasible_reason(
        HEADLINE, KernelConfig(block_m=64, chunk=128, num_warps=8), max_shared=32 * 1024
    )
    assert "tl.dot" in infeasible_reason(HEADLINE, KernelConfig(block_m=8))
    assert "chip" in infeasible_reason(MLPSpec((4096, 8)), cfg)
    assert infeasible_reason(HEADLINE, KernelConfig(strategy="torch")) is None


def test_register_file_caps_registers_with_many_warps():
    """16 warps x 32 threads share 64K registers: at most 128 each, not 255."""
    cfg = KernelConfig(block_m=128, chunk=128, num_warps=16)
    assert space.registers_per_thread(HEADLINE, cfg) < 255
    assert "max 128" in infeasible_reason(HEADLINE, cfg)


def test_dominated_configs():
    assert "rows" in dominated_reason(HEADLINE, KernelConfig(block_m=32), 16)
    assert dominated_reason(HEADLINE, KernelConfig(block_m=16), 1) is None
    assert dominated_reason(HEADLINE, KernelConfig(block_m=64), 33) is None  # 33 -> 64 rows
    narrow = MLPSpec((3, 5, 2))  # every chunk >= 16 renders the same kernel
    assert "same kernel as chunk 32" in dominated_reason(narrow, KernelConfig(chunk=64), 64)
    assert dominated_reason(narrow, KernelConfig(chunk=32), 64) is None
    assert dominated_reason(HEADLINE, KernelConfig(strategy="torch"), 1) is None


def test_a_domain_change_is_one_table_edit(monkeypatch):
    rowblock = dict(DOMAINS["rowblock"], num_stages=(1, 2))
    monkeypatch.setitem(DOMAINS, "rowblock", rowblock)
    s = search_space(HEADLINE, 4096)
    assert {c.num_stages for c in s.candidates if c.strategy == "rowblock"} == {1, 2}
    assert len(s.candidates) == 2 * 22 + 1


def test_a_strategy_without_rules_is_left_to_verification(monkeypatch):
    monkeypatch.setitem(space.RULES, "rowblock", None)
    monkeypatch.delitem(space.RULES, "rowblock")
    assert infeasible_reason(HEADLINE, KernelConfig(block_m=128, chunk=128, num_warps=2)) is None
