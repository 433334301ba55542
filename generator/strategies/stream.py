"""stream (two layers, the back-to-back GEMM of flash attention): block_m rows per program, x in
registers, the hidden layer produced block_n columns at a time in a loop and consumed at once by
the second layer (templates/kernel_stream.j2): the hidden layer never exists whole, anywhere."""

from __future__ import annotations

from mlpgen.layout import (
    ELEM_BYTES,
    chunks_of,
    next_pow2,
    padded,
    plan_stream,
    register_reason,
    shared_reason,
)
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies.base import Strategy


def reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if spec.depth != 2:
        return f"the {config.strategy} strategy needs exactly 2 layers"
    b = ELEM_BYTES[spec.dtype]
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
    if config.strategy == "stream_tma":
        smem += config.block_m * chunks_of(n2, config.chunk)[0].size * b
    return shared_reason(smem, max_shared)


def kernel_name(c: KernelConfig) -> str:
    return f"_k_{c.strategy}_m{c.block_m}_n{c.block_n}_c{c.chunk}"


def seeds(spec: MLPSpec, m: int) -> list[KernelConfig]:
    small = m <= 1024
    return [
        KernelConfig(
            "stream",
            block_m=16 if small else 128,
            block_n=64 if small else 32,
            chunk=64,
            num_warps=8,
            num_stages=3,
        )
    ]


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
    },
    rule=reason,
    kernel_name=kernel_name,
    planner=plan_stream,
    seeds=seeds,
    chunk_padded=True,
    kernel_lane=True,
)
