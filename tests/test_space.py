"""The search space: one table of per-strategy domains, feasibility before compiling, and the
per-bucket candidate lists the tuner searches."""

from dataclasses import replace

import pytest

from mlpgen import space
from mlpgen.layout import plan_cluster
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
from mlpgen.strategies import STRATEGIES, rowblock

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


def test_headline_space_sizes():
    """The production table for 256,512,256 fp16 with the H200's shared memory (the tuner
    passes the GPU's): 12 rowblock, 224 persist (block_m x block_n x warps x stages x
    last_block_n, last_block_n equal to block_n counted once as 0), 64 stream, 4 stream_tma, 24
    split, 8 layered and 72 chain configs (3 or 4 stages), epilogue and torch. 20 cannot work:
    rowblock 64 rows x chunk 128 with 4 warps and stream's 128-row tiles with 4 warps
    (registers), persist's
    128 x 256 with 4 warps (256 accumulators per thread, 8 of them), stream's 128 x 64 with 3
    stages (shared memory), epilogue (gelu); 16 are not searched (persist's last tiles wider
    than block_n); every other one is searched from 256 rows up, split only up to 4096 rows,
    layered only from 1024, chain from 16 to 4096, stream_tma from 4096, persist's narrower
    last tiles up to 1024. A bucket of one row only searches 16-row tiles, of every row-tiled
    strategy."""

    def size(b):
        return len(search_space(HEADLINE, b, H200_SHARED).candidates)

    assert {b: size(b) for b in (1, 16, 64, 256, 262144)} == {
        1: 85,  # persist's 52 16-row tiles
        16: 109,  # chain's 24 16-row tiles
        64: 312,
        256: 362,  # chain's 72
        262144: 140,  # persist's 62: no narrower last tiles
    }
    assert size(1024) == 370
    assert size(4096) == 236  # persist's narrower last tiles: over their 1024 rows
    assert size(8192) == 140  # split: over its 4096 rows, chain: over its 4096
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
        "dominated": 289,  # with layered's 8 (under its 1024 rows), chain's 72, stream_tma's 4
        "shared memory": 2,
        "no epilogue": 1,  # gelu: cuBLASLt's GELU epilogue is the tanh approximation
        "registers": 19,  # cluster's 2: one-row tiles of 64-column slices with 2 warps
        # cluster's 14 and its 8 32-row tiles (clusters=True: test_cluster_candidates_only_...)
        "no clusters": 22,
        "not searched": 16,  # persist's last_block_n 64 over block_n 32
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
    assert {c.strategy for c in deep.candidates} == {"persist", "layered", "chain", "torch"}
    assert all("hidden layer" in r for c, r in s.dropped if c.strategy == "layered")
    chain = [r for c, r in s.dropped if c.strategy == "chain"]
    assert len(chain) == len(configs_of("chain"))
    assert all(space.reason_kind(r) == "depth" for r in chain)


def test_rowblock_tiles_that_compile_past_the_limit_are_dropped():
    """Both rowblock tiles of 784,1024,1024,10 fp32 that fit the register estimate ran past the
    60 s compile limit on the H200 (128 KiB of activations per program): dropped before
    compiling. The headline's largest tile (96 KiB, fp16) compiled in seconds: kept."""
    fp32 = MLPSpec((784, 1024, 1024, 10), act="relu", dtype="fp32")
    for warps in (4, 8):
        cfg = KernelConfig(block_m=16, chunk=128, num_warps=warps)
        assert space.reason_kind(infeasible_reason(fp32, cfg)) in ("registers", "compile time")
    held = infeasible_reason(fp32, KernelConfig(block_m=16, chunk=64, num_warps=8))
    assert "compile time" in held and space.reason_kind(held) == "compile time"
    assert infeasible_reason(HEADLINE, KernelConfig(block_m=64, chunk=64, num_warps=8)) is None
    assert "rowblock" not in {c.strategy for c in search_space(fp32, 64).candidates}


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
    assert rowblock.registers_per_thread(HEADLINE, cfg) < 255
    assert "max 128" in infeasible_reason(HEADLINE, cfg)


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


def test_epilogue_strategy_only_where_cublaslt_computes_the_activation_exactly():
    for act, bias, widths, ok in [
        ("relu", True, (784, 1024, 1024, 10), True),
        ("gelu_tanh", True, (1024, 4096, 1024), True),
        ("gelu", True, (256, 512, 256), False),  # cuBLASLt's GELU is the tanh approximation
        ("relu", False, (64, 64, 3), False),  # no bias to fuse
        ("relu", True, (64, 3), False),  # no hidden layer
    ]:
        spec = MLPSpec(widths, act=act, bias=bias)
        for b in (1, 262144):
            s = search_space(spec, b)
            assert (KernelConfig(strategy="epilogue") in s) == ok, (spec.name, b)
            assert KernelConfig(strategy="torch") in s
        if not ok:
            assert s.dropped_counts()["no epilogue"] == 1


def test_rowblock_loads_its_weights_first_where_they_fit_in_registers():
    """rowblock loads every weight tile before its first dot where its whole register
    estimate stays within layout.PREFETCH_REGS, else each where it is used: never a reason to
    drop a config (the estimate counts what the kernel holds)."""
    from mlpgen.layout import prefetches
    from mlpgen.render import render_kernel

    deep = MLPSpec((64, 64, 64, 64, 64, 3))
    small = KernelConfig(block_m=64, chunk=64, num_warps=4)  # the H200's winner from 64 rows
    assert prefetches(deep, small)
    assert "weights prefetched" in render_kernel(deep, small).splitlines()[2]
    big = KernelConfig(block_m=16, chunk=128, num_warps=8)  # 512 KiB of weights
    assert not prefetches(HEADLINE, big) and infeasible_reason(HEADLINE, big) is None
    assert "prefetched" not in render_kernel(HEADLINE, big)
    assert rowblock.registers_per_thread(deep, small) > rowblock.registers_per_thread(
        deep, KernelConfig(block_m=64, chunk=64, num_warps=8)
    )


def test_cluster_candidates_only_where_the_gpu_launches_clusters():
    """cluster configs are searched only when the tuner says the GPU launches thread-block
    clusters (sm_90+; CPU interpretation never does), in buckets up to CLUSTER_MAX_BUCKET, and
    seeded there; everywhere else they are dropped with a reason."""
    for bucket in (1, 64, 256):
        off = search_space(HEADLINE, bucket, H200_SHARED)
        on = search_space(HEADLINE, bucket, H200_SHARED, clusters=True)
        cluster = {c for c in on.candidates if c.strategy == "cluster"}
        # 16 rows: chunks 32, 64 (16 and 8 CTAs a cluster) x k steps 128, 256 x 2, 4 warps;
        # one row the same but 64-column chunks with 2 warps (registers); 32 rows the same 8
        # as 16 rows, over 16 rows only (a taller tile is dominated)
        assert {c.block_m for c in cluster} == ({1, 16} if bucket < 32 else {1, 16, 32})
        assert len(cluster) == (14 if bucket < 32 else 22)
        one_rows = {(c.chunk, c.num_warps) for c in cluster if c.block_m == 1}
        assert one_rows == {(32, 2), (32, 4), (64, 4)}
        assert not any(c.strategy == "cluster" for c in off.candidates)
        assert off.dropped_counts()["no clusters"] == 22
        assert set(on.candidates) - cluster == set(off.candidates)
        seeds = set(space.strategy_seeds(HEADLINE, bucket, H200_SHARED))
        assert KernelConfig("cluster", block_m=16, chunk=32, block_k=128, num_warps=4) in seeds
        one_row = KernelConfig("cluster", block_m=1, chunk=32, block_k=128, num_warps=4)
        assert (one_row in seeds) == (bucket == 1)  # seeded up to 16 rows
        tall = KernelConfig("cluster", block_m=32, chunk=64, block_k=128, num_warps=4)
        assert (tall in seeds) == (bucket == 256)  # seeded over 64 rows
    big = search_space(HEADLINE, 1024, H200_SHARED, clusters=True)
    assert not any(c.strategy == "cluster" for c in big.candidates)


def test_cluster_feasibility():
    """Two layers, a power-of-two number of hidden chunks up to 16 (one CTA each), partial
    outputs that fit the registers, a receive buffer that fits the shared memory beside triton's."""
    cfg = KernelConfig("cluster", block_m=16, chunk=32, block_k=128, num_warps=4)
    assert infeasible_reason(HEADLINE, cfg) is None
    assert infeasible_reason(MLPSpec((100, 250, 70)), cfg) is None  # 8 CTAs, masked widths
    assert "2 layers" in infeasible_reason(MLPSpec((256, 512, 512, 256)), cfg)
    assert "10 hidden chunks" in infeasible_reason(MLPSpec((256, 300, 256)), cfg)
    assert "32 hidden chunks" in infeasible_reason(MLPSpec((256, 1024, 256)), cfg)
    assert "1 hidden chunks" in infeasible_reason(MLPSpec((256, 32, 256)), cfg)
    assert "registers" in infeasible_reason(MLPSpec((256, 512, 4096)), cfg)
    # 16 CTAs x 16 rows x 64 owned columns of fp32: a 64 KiB buffer, beside triton's operand
    # tiles more than 99 KiB, which the H200 launches (opted in: _opt_in_shared)
    wide = MLPSpec((256, 512, 1024))
    assert plan_cluster(wide, cfg).buffer_bytes == 64 * 1024
    assert "shared memory" in infeasible_reason(wide, cfg)
    assert infeasible_reason(wide, cfg, H200_SHARED) is None
    # rows one by one on the CUDA cores: a buffer of a sixteenth at one row, x and both weight
    # tiles held at once in registers
    row = KernelConfig("cluster", block_m=1, chunk=32, block_k=256, num_warps=4)
    assert plan_cluster(HEADLINE, row).fma and not plan_cluster(HEADLINE, cfg).fma
    assert plan_cluster(wide, row).buffer_bytes == 16 * 1 * 64 * 4
    # a 1024 x 32 second-layer tile fits 4 warps (254 registers, offline sm_90a compile), not 2;
    # 1024 x 64 fits neither
    assert infeasible_reason(wide, row) is None
    assert "registers" in infeasible_reason(wide, replace(row, num_warps=2))
    assert "registers" in infeasible_reason(wide, replace(row, chunk=64))
    # one row widens its weight tiles as it uses them; more rows keep one widened for all rows
    assert infeasible_reason(HEADLINE, replace(row, chunk=64)) is None
    for rows in (1, 2, 4, 8):
        assert infeasible_reason(HEADLINE, replace(row, block_m=rows)) is None
        if rows > 1:
            assert "registers" in infeasible_reason(HEADLINE, replace(row, block_m=rows, chunk=64))
    assert plan_cluster(HEADLINE, replace(row, block_k=64)).k_starts == (0, 64, 128, 192)


def test_persist_last_tiles_are_narrower_ones_up_to_their_bucket():
    """persist's last_block_n: searched where it narrows the last layer's tiles (block_n wide
    and no wider than the last width), on more than one layer, in buckets up to 1024 rows."""

    def last(bn, lbn):
        return KernelConfig("persist", block_m=64, block_n=bn, num_stages=3, last_block_n=lbn)

    assert infeasible_reason(HEADLINE, last(64, 32)) is None
    assert "not searched" in infeasible_reason(HEADLINE, last(32, 64))
    one_layer = MLPSpec((256, 128))
    assert "same kernel" in infeasible_reason(one_layer, last(64, 32))
    narrow_out = MLPSpec((784, 1024, 1024, 10), act="relu", dtype="fp32")
    assert infeasible_reason(narrow_out, last(128, 16), H200_SHARED) is None  # 10 in 16
    assert "same kernel" in infeasible_reason(narrow_out, last(128, 32), H200_SHARED)
    cfg = last(64, 32)
    assert dominated_reason(HEADLINE, cfg, 1024) is None
    assert "1024 rows" in dominated_reason(HEADLINE, cfg, 1025)
    assert cfg in search_space(HEADLINE, 1024, H200_SHARED)
    assert cfg not in search_space(HEADLINE, 4096, H200_SHARED)
    assert last(64, 0) in search_space(HEADLINE, 4096, H200_SHARED)
