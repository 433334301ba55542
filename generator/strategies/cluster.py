"""cluster (two layers, sm_90): split's programs of one row block as one thread-block cluster.
Each CTA stores its partial outputs into the shared memory of the CTA that owns those columns
(distributed shared memory) and, after the cluster's barrier, each CTA sums its columns: no
atomics, no workspace, a fixed summation order (templates/kernel_cluster.j2). A block_m under 16
(tl.dot's minimum) runs the rows one by one on the CUDA cores (a cluster per row at block_m 1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mlpgen.layout import ELEM_BYTES, MIN_DOT, next_pow2, register_reason, shared_reason
from mlpgen.strategies.base import Strategy

if TYPE_CHECKING:  # mlpgen.spec imports the strategies
    from mlpgen.spec import KernelConfig, MLPSpec

# Hopper's thread-block clusters: at most 8 CTAs portably, 16 where the launch allows it
# (triton's launch does for 16), in powers of two here (the slots are summed over an arange)
CLUSTER_SIZES = (2, 4, 8, 16)
FMA_OVERHEAD_REGS = 30  # the row form's registers beyond its tiles: addresses and sums


@dataclass(frozen=True)
class ClusterPlan:
    """The cluster strategy (two layers): split's hidden chunks, one CTA each, as one thread-block
    cluster per row block; CTA r owns output columns r*bn.. and receives every CTA's partial
    outputs for them into its shared memory (ctas slots of block_m x bn fp32: buffer_bytes)."""

    k: int
    hidden: int
    n: int
    ctas: int  # CTAs a cluster: hidden chunks
    bn: int  # output columns a CTA owns (a power of two, at least 2: n <= ctas * bn)
    np: int  # the partial output's columns (n rounded up to a power of two)
    buffer_bytes: int
    mask_k: bool
    mask_hidden: bool
    mask_n: bool
    act: str
    out_act: str
    # tiles under tl.dot's 16 rows are unrolled row by row on the CUDA cores, summing in the
    # weights' load layout (templates/cluster_rows.j2): a batch of one hands over one row
    fma: bool
    k_starts: tuple[int, ...]  # the first layer's block_k steps


def plan_cluster(spec: MLPSpec, config: KernelConfig) -> ClusterPlan:
    if spec.depth != 2:
        raise ValueError(f"the cluster strategy needs 2 layers, {spec.name} has {spec.depth}")
    k, hidden, n = spec.widths
    ctas = -(-hidden // config.chunk)
    bn = max(2, next_pow2(-(-n // ctas)))  # _quad_slot pairs the columns
    return ClusterPlan(
        k=k,
        hidden=hidden,
        n=n,
        ctas=ctas,
        bn=bn,
        np=next_pow2(n),
        buffer_bytes=ctas * config.block_m * bn * 4,
        mask_k=k % config.block_k != 0,
        mask_hidden=hidden % config.chunk != 0,
        mask_n=n != next_pow2(n),
        act=spec.act,
        out_act=spec.out_act,
        fma=config.block_m < MIN_DOT,
        k_starts=tuple(range(0, k, config.block_k)),
    )


def reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if spec.depth != 2:
        return "the cluster strategy needs exactly 2 layers"
    plan = plan_cluster(spec, config)
    if plan.ctas not in CLUSTER_SIZES:
        sizes = ", ".join(map(str, CLUSTER_SIZES))
        return f"{plan.ctas} hidden chunks: a cluster takes {sizes} CTAs"
    b = ELEM_BYTES[spec.dtype]
    m, c, kk = config.block_m, config.chunk, config.block_k
    threads = 32 * config.num_warps
    if plan.fma:  # x rows and both weight tiles held at once, the partial outputs
        k_pad = len(plan.k_starts) * kk
        tiles = c * k_pad + plan.np * c
        # an output sum sits in every lane that added its slice (16-byte loads of chunk values)
        replicas = max(1, c * b // 16)
        live = (m * k_pad + tiles) * b + m * plan.np * 4 * replicas
        if m > 1:  # a weight tile widened to fp32 once and kept for every row
            live += max(c * k_pad, plan.np * c) * 4
        # one row widens its tiles as it multiplies them. Offline sm_90a compiles of the
        # headline's row form used 95 / 163 / 168 registers at chunk 32 / 32 / 64 with
        # 4 / 2 / 4 warps, where this counts 73 / 146 / 145 (counting a widened tile too gave
        # 131 / 262 / 259 and dropped chunk 64, which then proved faster at 16 rows);
        # 256 -> 512 -> 1024 at chunk 32, 4 warps: 254 (this 193)
        regs = live // (4 * threads) + FMA_OVERHEAD_REGS
    else:  # the hidden slice, partial outputs, an x tile
        regs = (m * c * (4 + b) + m * plan.np * 4 + m * kk * b) // (4 * threads)
    if (why := register_reason(regs, config.num_warps)) is not None:
        return why
    # past 48 KiB the module opts the launch in, up to the GPU's limit
    smem = max((m + c) * kk, (m + plan.np) * c) * b + plan.buffer_bytes
    return shared_reason(smem, max_shared)


def tiles(spec: MLPSpec, config: KernelConfig) -> dict[str, int]:
    """The dot form's constexpr tiles; the row form (fma) unrolls its rows and k steps, so its
    tiles stay written in."""
    plan = plan_cluster(spec, config)
    if plan.fma:
        return {}
    return {
        "BLOCK_M": config.block_m,
        "CHUNK": config.chunk,
        "BLOCK_K": config.block_k,
        "CTAS": plan.ctas,
        "BN": plan.bn,
    }


STRATEGY = Strategy(
    name="cluster",
    tiles=tiles,
    family=lambda c: "_k_cluster",
    domain={
        # on the H200 16-row tiles with 32-column chunks and 4 warps were the fastest at 1-64
        # rows, 8 warps slower. One row a cluster (on the CUDA cores) took 3.11 us at batch 1
        # and 4.05 at 16 rows against the 16-row tile's 4.21 / 4.45; 2, 4 and 8 rows were
        # slower than one of the two at 1-64 rows. 32-row tiles with 64-column chunks took
        # 5.70 us at 256 rows against the 16-row tile's 6.60; 64-row tiles lost at 64-1024
        # rows; 8 and 16 warps took 0.99-1.15x the best of 2 and 4 at 1-64 rows
        "block_m": (1, 16, 32),
        "chunk": (32, 64),
        "block_k": (128, 256),
        "num_warps": (2, 4),
        "num_stages": (1,),
    },
    rule=reason,
    kernel_name=lambda c: f"_k_cluster_m{c.block_m}_c{c.chunk}_k{c.block_k}",
    planner=plan_cluster,
    # the hand-over grows with the rows like split's (every partial output crosses to its
    # owner once): on the H200 it won from 1 to 256 rows and at 1024 rows every tile of 16-128
    # rows lost to eager
    rows=(1, 256),
    rows_why="its hand-over grows with the bucket",
    min_block_m=1,
    clusters=True,
)
