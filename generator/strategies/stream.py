"""stream (two layers, the back-to-back GEMM of flash attention): block_m rows per program, x in
registers, the hidden layer produced block_n columns at a time in a loop and consumed at once by
the second layer (templates/kernel_stream.j2): the hidden layer never exists whole, anywhere.

tma: every tile moved by the Tensor Memory Accelerator, on a persistent grid whose programs walk
the row blocks (min(cdiv(M, block_m), SMs) programs): large batches, where the descriptors'
setup is paid once per program. The module gives triton an allocator for the descriptors and
takes the torch path for inputs whose base is not 16-byte aligned."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mlpgen.layout import (
    ELEM_BYTES,
    Chunk,
    chunks_of,
    next_pow2,
    padded,
    register_reason,
    shared_reason,
)
from mlpgen.strategies.base import Strategy

if TYPE_CHECKING:  # mlpgen.spec imports the strategies
    from mlpgen.spec import KernelConfig, MLPSpec

TMA_ALIGN = 16  # bytes: TMA needs 16-byte aligned bases and row strides
# the TMA tiles searched: on the H200 128 x 64 tiles with 8 warps and 2 stages ran the
# headline's 262144 rows in 351 us with chunk 64, 318 with 128 (pointer loads: 366), 128 x 32
# in 442, 64 x 32 with 4 warps in 654
TMA_TILE = {"block_m": 128, "num_warps": 8, "num_stages": 2}
# the TMA tiles and the descriptors' setup pay off at large batches only (on the H200 it lost to
# persist at 4096 rows)
TMA_MIN_BUCKET = 4096


@dataclass(frozen=True)
class StreamPlan:
    """The stream strategy (two layers): x chunks stay in registers, the hidden layer is
    produced block_n columns at a time and consumed at once by the second layer."""

    k: int
    n1: int
    n2: int
    in_chunks: tuple[Chunk, ...]
    out_chunks: tuple[Chunk, ...]
    mask_n1: bool
    act: str
    out_act: str


def plan_stream(spec: MLPSpec, config: KernelConfig) -> StreamPlan:
    if spec.depth != 2:
        raise ValueError(
            f"the stream strategy needs exactly 2 layers, {spec.name} has {spec.depth}"
        )
    k, n1, n2 = spec.widths
    return StreamPlan(
        k=k,
        n1=n1,
        n2=n2,
        in_chunks=chunks_of(k, config.chunk),
        out_chunks=chunks_of(n2, config.chunk),
        mask_n1=n1 % config.block_n != 0,
        act=spec.act,
        out_act=spec.out_act,
    )


def reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if spec.depth != 2:
        return "the stream strategy needs exactly 2 layers"
    b = ELEM_BYTES[spec.dtype]
    if config.tma and any(w * b % TMA_ALIGN for w in spec.widths):
        return f"TMA needs rows of a multiple of {TMA_ALIGN} bytes"
    k, n1, n2 = spec.widths
    live = config.block_m * (padded(k, config.chunk) * b + padded(n2, config.chunk) * 4)
    live += config.block_m * config.block_n * 4
    regs = live // (4 * 32 * config.num_warps)
    if (why := register_reason(regs, config.num_warps)) is not None:
        return why
    if config.block_n > max(32, next_pow2(n1)):
        return f"block_n {config.block_n} over the hidden width: same kernel as a narrower one"
    # shared memory: num_stages buffers of the loop's two weight tiles, plus x staged as the
    # first dot's operand (H200: m128 n64 c128 at 3 stages asked 262400 bytes, this 262144);
    # TMA stores stage one output chunk too (m128 n64 at 3 stages: 295352, this 294912)
    k_pad, n2_pad = padded(k, config.chunk), padded(n2, config.chunk)
    smem = config.num_stages * config.block_n * (k_pad + n2_pad) * b + config.block_m * k_pad * b
    if config.tma:
        smem += config.block_m * chunks_of(n2, config.chunk)[0].size * b
    return shared_reason(smem, max_shared)


def dominated(
    spec: MLPSpec, config: KernelConfig, bucket: int, domain: Mapping[str, tuple[int, ...]]
) -> str | None:
    if not config.tma:
        return None
    if any(getattr(config, f) != v for f, v in TMA_TILE.items()):
        return "a TMA tile other than 128 rows with 8 warps and 2 stages: not searched"
    if bucket < TMA_MIN_BUCKET:
        return f"stream with TMA in a bucket under {TMA_MIN_BUCKET} rows: descriptor setup"
    return None


def kernel_name(c: KernelConfig) -> str:
    tma = "_tma" if c.tma else ""
    return f"_k_stream{tma}_m{c.block_m}_n{c.block_n}_c{c.chunk}"


STRATEGY = Strategy(
    name="stream",
    domain={
        "block_m": (16, 32, 64, 128),
        "block_n": (32, 64),
        "chunk": (64, 128),
        "num_warps": (4, 8),
        # 2 stages make room for block_n 64 at block_m 128 (3 do not fit): on the H200 that
        # tile won the headline's 16384 rows (23.2 us; the 3-stage 128 x 32 took 23.5)
        "num_stages": (2, 3),
        "tma": (0, 1),  # TMA tiles: TMA_TILE only, from TMA_MIN_BUCKET rows (dominated)
    },
    rule=reason,
    kernel_name=kernel_name,
    tiles=lambda spec, c: {"BLOCK_M": c.block_m, "BLOCK_N": c.block_n},
    family=lambda c: f"_k_stream{'_tma' if c.tma else ''}_c{c.chunk}",
    planner=plan_stream,
    dominated=dominated,
    chunk_padded=True,
    # TMA calls take a path of their own: the allocator and alignment checks, a persistent grid
)
