"""How a spec is cut into register tiles for one config: the arithmetic the templates must not do.

A width w is cut into chunks of `config.chunk` columns; a width narrower than the chunk becomes a
single chunk padded to a power of two (at least 16, tl.dot's minimum). Padded columns are masked
on load (zero weights), so they never reach a real output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # mlpgen.spec imports the strategies
    from mlpgen.spec import KernelConfig, MLPSpec


MIN_DOT = 16


def next_pow2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


@dataclass(frozen=True)
class Chunk:
    index: int
    start: int
    size: int  # power of two, >= 16
    masked: bool  # True when start + size runs past the width


@dataclass(frozen=True)
class Layer:
    index: int
    k: int  # input width
    n: int  # output width
    in_chunks: tuple[Chunk, ...]
    out_chunks: tuple[Chunk, ...]
    act: str
    last: bool


def chunks_of(width: int, chunk: int) -> tuple[Chunk, ...]:
    size = chunk if width > chunk else max(MIN_DOT, next_pow2(width))
    count = -(-width // size)
    return tuple(Chunk(i, i * size, size, (i + 1) * size > width) for i in range(count))


def plan_layers(spec: MLPSpec, config: KernelConfig) -> tuple[Layer, ...]:
    cuts = [chunks_of(w, config.chunk) for w in spec.widths]
    return tuple(
        Layer(
            index=i,
            k=spec.widths[i],
            n=spec.widths[i + 1],
            in_chunks=cuts[i],
            out_chunks=cuts[i + 1],
            act=spec.out_act if i == spec.depth - 1 else spec.act,
            last=i == spec.depth - 1,
        )
        for i in range(spec.depth)
    )


ELEM_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}
# rowblock loads every weight tile first where its whole estimate stays within this many
# registers per thread (holding them costs registers that larger tiles need otherwise)
PREFETCH_REGS = 160


def padded(width: int, chunk: int) -> int:
    return sum(c.size for c in chunks_of(width, chunk))


def live_activations(spec: MLPSpec, config: KernelConfig) -> int:
    """The widest pair of padded widths a rowblock program holds at once: a layer's input and
    the output it is building."""
    return max(
        padded(k, config.chunk) + padded(n, config.chunk)
        for k, n in zip(spec.widths[:-1], spec.widths[1:])
    )


def weight_tile_bytes(spec: MLPSpec, config: KernelConfig) -> int:
    """Bytes of every layer's weight tiles as rowblock loads them (chunks padded)."""
    return ELEM_BYTES[spec.dtype] * sum(
        sum(o.size for o in layer.out_chunks) * sum(c.size for c in layer.in_chunks)
        for layer in plan_layers(spec, config)
    )


def rowblock_register_bytes(spec: MLPSpec, config: KernelConfig, prefetch: bool) -> int:
    """Rough register bytes of a rowblock program: the widest live pair of activations (the
    input of a layer and the output being built), one fp32 accumulator chunk and one weight
    tile, or every layer's weight tiles where they are all loaded first (prefetch)."""
    b = ELEM_BYTES[spec.dtype]
    bytes_ = config.block_m * live_activations(spec, config) * b
    bytes_ += config.block_m * config.chunk * 4
    if prefetch:
        return bytes_ + weight_tile_bytes(spec, config)
    return bytes_ + config.chunk * config.chunk * b


def prefetches(spec: MLPSpec, config: KernelConfig) -> bool:
    """Whether rowblock loads every layer's weights (and biases) before its first dot: then a
    program waits for memory once, not once per layer (no layer's weights depend on the layer
    before), where that keeps it within PREFETCH_REGS registers per thread."""
    threads = 32 * config.num_warps
    return rowblock_register_bytes(spec, config, True) // (4 * threads) <= PREFETCH_REGS


def dot_count(spec: MLPSpec, config: KernelConfig) -> int:
    """Unrolled tl.dot calls in the kernel: a proxy for compile time and code size."""
    return sum(len(x.in_chunks) * len(x.out_chunks) for x in plan_layers(spec, config))


@dataclass(frozen=True)
class TiledLayer:
    """One layer of a tiled kernel (persist): block_m x block_n tiles of its
    [M, n] output, a loop over its k."""

    index: int
    k: int
    n: int
    block_n: int  # the tiles' columns (config.block_n; persist's last layer: last_block_n)
    n_tiles: int
    mask_k: bool  # k is not a multiple of block_k
    mask_n: bool  # n is not a multiple of block_n
    src: str  # pointer the layer reads: x_ptr or a hidden scratch buffer
    dst: str  # pointer it writes: a hidden scratch buffer or y_ptr
    act: str
    last: bool


def plan_tiles(spec: MLPSpec, config: KernelConfig) -> tuple[TiledLayer, ...]:
    out = []
    for layer in plan_layers(spec, config):
        i = layer.index
        bn = config.last_block_n if layer.last and config.last_block_n else config.block_n
        out.append(
            TiledLayer(
                index=i,
                k=layer.k,
                n=layer.n,
                block_n=bn,
                n_tiles=-(-layer.n // bn),
                mask_k=layer.k % config.block_k != 0,
                mask_n=layer.n % bn != 0,
                src="x_ptr" if i == 0 else f"h{i}_ptr",
                dst="y_ptr" if layer.last else f"h{i + 1}_ptr",
                act=layer.act,
                last=layer.last,
            )
        )
    return tuple(out)


# Limits every feasibility rule shares (generator/strategies/<name>.py): estimates good enough
# to drop hopeless candidates before compiling, not to rank them.
MAX_REGS = 255  # per thread on NVIDIA GPUs
REGISTER_FILE = 65536  # 32-bit registers per SM: one program's threads must fit in it
MAX_SHARED = 99 * 1024  # opt-in shared memory per block on sm86/89; the tuner passes the GPU's
MAX_ACC_REGS = 128  # fp32 accumulator registers per thread a tile may take


def register_reason(regs: int, num_warps: int) -> str | None:
    """Why `regs` registers per thread cannot run with num_warps warps, or None."""
    cap = min(MAX_REGS, REGISTER_FILE // (32 * num_warps))
    if regs > cap:
        return f"~{regs} registers per thread (max {cap} with {num_warps} warps)"
    return None


def shared_reason(smem: int, max_shared: int) -> str | None:
    """Why `smem` bytes of shared memory per program do not fit, or None."""
    if smem > max_shared:
        return f"~{smem // 1024} KiB shared memory (max {max_shared // 1024})"
    return None


def tile_reason(config: KernelConfig, elem_bytes: int, max_shared: int) -> str | None:
    """Why a block_m x block_n output tile with a pipelined block_k loop does not fit: its fp32
    accumulator in registers, its num_stages operand buffers in shared memory."""
    acc = config.block_m * config.block_n // (32 * config.num_warps)
    if acc > MAX_ACC_REGS:
        return f"~{acc} accumulator registers per thread (max {MAX_ACC_REGS})"
    smem = (config.block_m + config.block_n) * config.block_k * elem_bytes * config.num_stages
    return shared_reason(smem, max_shared)
