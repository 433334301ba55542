"""rowblock: each program owns block_m rows through every layer, the activations in registers,
each layer unrolled over `chunk`-wide column chunks (templates/kernel_rowblock.j2). The whole
MLP is one launch and no hidden activation leaves the chip: narrow MLPs at every batch."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlpgen.layout import (
    ELEM_BYTES,
    MIN_DOT,
    dot_count,
    live_activations,
    next_pow2,
    plan_layers,
    prefetches,
    register_reason,
    rowblock_register_bytes,
    shared_reason,
)
from mlpgen.strategies.base import Strategy

if TYPE_CHECKING:  # mlpgen.spec imports the strategies
    from mlpgen.spec import KernelConfig, MLPSpec

MAX_FUSED_WIDTH = 1024  # wider layers do not fit the kernel's registers
MAX_DOTS = 512  # unrolled tl.dot calls; past this, compile time explodes
# activations one program holds (block_m x the widest layer pair): on the H200 both fp32
# 784,1024,1024,10 tiles at 128 KiB ran past the 60 s compile limit; the headline's largest,
# 96 KiB (fp16, 64 rows x 256 + 512), compiles in seconds
MAX_HELD_ACTIVATIONS = 96 * 1024


def fusable(spec: MLPSpec) -> bool:
    """Whether the kernel can hold every width of this spec on chip."""
    return max(spec.widths) <= MAX_FUSED_WIDTH


def registers_per_thread(spec: MLPSpec, config: KernelConfig) -> int:
    """Rough register estimate of a program (layout.rowblock_register_bytes), spread over its
    threads. Good enough to drop hopeless candidates, not to rank them."""
    bytes_ = rowblock_register_bytes(spec, config, prefetches(spec, config))
    return bytes_ // (4 * 32 * config.num_warps)


def shared_bytes(spec: MLPSpec, config: KernelConfig) -> int:
    """Shared memory of the largest single tl.dot: its operand tiles staged through shared
    memory plus an fp32 accumulator-sized scratch for layout conversion (Triton reuses the
    buffers of one dot for the next, so the dots do not add up)."""
    b = ELEM_BYTES[spec.dtype]
    tile_m = config.block_m
    tile_k = max(min(config.chunk, max(MIN_DOT, next_pow2(w))) for w in spec.widths[:-1])
    tile_n = max(min(config.chunk, max(MIN_DOT, next_pow2(w))) for w in spec.widths[1:])
    return (tile_m * tile_k + tile_k * tile_n) * b + tile_m * tile_n * 4


def reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if not fusable(spec):
        return f"a width over {MAX_FUSED_WIDTH} does not fit on chip"
    if config.block_m < MIN_DOT:
        return f"block_m below {MIN_DOT} (tl.dot's minimum)"
    dots = dot_count(spec, config)
    if dots > MAX_DOTS:
        return f"{dots} unrolled dots (max {MAX_DOTS})"
    regs = registers_per_thread(spec, config)
    if (why := register_reason(regs, config.num_warps)) is not None:
        return why
    held = config.block_m * live_activations(spec, config) * ELEM_BYTES[spec.dtype]
    if held > MAX_HELD_ACTIVATIONS:
        return f"{held // 1024} KiB of activations held per program: compile time explodes"
    return shared_reason(shared_bytes(spec, config), max_shared)


STRATEGY = Strategy(
    name="rowblock",
    domain={
        "block_m": (16, 32, 64),
        "chunk": (64, 128),
        "num_warps": (4, 8),
        # the kernel is fully unrolled: it has no loop for Triton's software pipeliner, so
        # num_stages changes nothing (tests/test_gpu_tune.py checks the binaries are equal)
        "num_stages": (1,),
    },
    rule=reason,
    kernel_name=lambda c: f"_k_rowblock_m{c.block_m}_c{c.chunk}",
    tiles=lambda spec, c: {"BLOCK_M": c.block_m},
    family=lambda c: f"_k_rowblock_c{c.chunk}",
    planner=plan_layers,
    template_args=lambda spec, config: {"prefetch": prefetches(spec, config)},
    chunk_padded=True,
)
