"""split (two layers, small batches): program (i, j) computes hidden columns j*chunk.. of row
block i, multiplies them into its share of the output (block_n columns at a time) and adds that
into an fp32 workspace with atomics; the last program of a row block to arrive adds the bias and
writes y (templates/kernel_split.j2). Many SMs read the weights and no program waits for
another (no grid barrier)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mlpgen.layout import ELEM_BYTES, register_reason, shared_reason
from mlpgen.strategies.base import Strategy

if TYPE_CHECKING:  # mlpgen.spec imports the strategies
    from mlpgen.spec import KernelConfig, MLPSpec


@dataclass(frozen=True)
class SplitPlan:
    """The split strategy (two layers): hidden chunks across programs, the output reduced in an
    fp32 workspace. n_chunks programs add into each row block's outputs."""

    k: int
    hidden: int
    n: int
    n_chunks: int
    mask_k: bool  # k is not a multiple of block_k
    mask_hidden: bool  # hidden is not a multiple of chunk
    mask_n: bool  # n is not a multiple of block_n
    n_starts: tuple[int, ...]  # the output tiles' first columns
    act: str
    out_act: str


def plan_split(spec: MLPSpec, config: KernelConfig) -> SplitPlan:
    if spec.depth != 2:
        raise ValueError(f"the split strategy needs exactly 2 layers, {spec.name} has {spec.depth}")
    k, hidden, n = spec.widths
    return SplitPlan(
        k=k,
        hidden=hidden,
        n=n,
        n_chunks=-(-hidden // config.chunk),
        mask_k=k % config.block_k != 0,
        mask_hidden=hidden % config.chunk != 0,
        mask_n=n % config.block_n != 0,
        n_starts=tuple(range(0, n, config.block_n)),
        act=spec.act,
        out_act=spec.out_act,
    )


def reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if spec.depth != 2:
        return "the split strategy needs exactly 2 layers"
    b = ELEM_BYTES[spec.dtype]
    m, c, n, k = config.block_m, config.chunk, config.block_n, config.block_k
    # the hidden slice (fp32 and cast), one partial output tile and one x tile live in
    # registers; the weight tiles are tl.dot's shared-memory operands (counted below)
    live = m * c * (4 + b) + m * n * 4 + m * k * b
    regs = live // (4 * 32 * config.num_warps)
    if (why := register_reason(regs, config.num_warps)) is not None:
        return why
    smem = max((m + c) * k, (m + n) * c) * b + m * n * 4
    return shared_reason(smem, max_shared)


def dominated(
    spec: MLPSpec, config: KernelConfig, bucket: int, domain: Mapping[str, tuple[int, ...]]
) -> str | None:
    """A chunk wider than the hidden layer (a block_n wider than the output) renders the same
    kernel as the domain's smallest one that covers it."""
    for field, width in (("chunk", spec.widths[1]), ("block_n", spec.widths[-1])):
        same = min((v for v in domain[field] if v >= width), default=max(domain[field]))
        if getattr(config, field) > same:
            return f"{field} {getattr(config, field)} over the width: same kernel as {same}"
    return None


def tiles(m: int) -> dict:
    """The tiles for a batch of m rows that won on the H200: wider hidden chunks as the rows
    grow keep the atomic traffic in check."""
    return dict(
        block_m=16,
        chunk=32 if m <= 64 else 64 if m <= 256 else 128,
        block_n=256 if m <= 64 else 128,
        block_k=128,
        num_warps=4,
        num_stages=1,
    )


STRATEGY = Strategy(
    name="split",
    tiles=lambda spec, c: {
        "BLOCK_M": c.block_m,
        "CHUNK": c.chunk,
        "BLOCK_N": c.block_n,
        "BLOCK_K": c.block_k,
    },
    family=lambda c: "_k_split",
    domain={
        # on the H200 block_m 16 won at every batch up to 1024 and block_n 64 never won; the
        # atomics make taller row tiles pointless
        "block_m": (16, 32),
        "chunk": (32, 64, 128),
        "block_n": (128, 256),
        "block_k": (128,),
        # 8 warps need the template's barrier between the last program's reads of the
        # workspace and its zeroing stores (tests/test_gpu_kernels.py runs 8-warp launches)
        "num_warps": (4, 8),
        # the layer-1 k loop is unrolled (static_range): no pipeliner loop, stages change nothing
        "num_stages": (1,),
    },
    rule=reason,
    kernel_name=lambda c: f"_k_split_m{c.block_m}_c{c.chunk}_n{c.block_n}_k{c.block_k}",
    planner=plan_split,
    # the atomic reduction's traffic grows with M (M x out x hidden/chunk): on the H200 split
    # already lost to eager at 1024 rows, so larger buckets do not time it
    rows=(1, 4096),
    rows_why="its atomic reduction grows with the bucket",
    dominated=dominated,
)
