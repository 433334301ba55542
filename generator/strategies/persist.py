"""persist: a persistent grid (at most one program per SM) computes each layer as block_m x
block_n output tiles with a block_k loop, stages the hidden activations through L2/global memory
and waits at a grid barrier between layers (templates/kernel_persist.j2): one launch in which
many SMs read the weights, at any width."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mlpgen.layout import ELEM_BYTES, MIN_DOT, next_pow2, plan_tiles, tile_reason
from mlpgen.strategies.base import Strategy

if TYPE_CHECKING:  # mlpgen.spec imports the strategies
    from mlpgen.spec import KernelConfig, MLPSpec

# narrower last tiles give a narrow last layer as many tiles as the hidden ones have: on the
# H200 64 x 32 last tiles under 64 x 64 won at 1024 rows and lost at 4096 (17.98 against
# 14.52 us), so larger buckets skip them
LAST_MAX_BUCKET = 1024


def reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if (why := tile_reason(config, ELEM_BYTES[spec.dtype], max_shared)) is not None:
        return why
    widest = max(MIN_DOT, next_pow2(max(spec.widths[1:])))
    if config.block_n > max(32, widest):
        return f"block_n {config.block_n} over the widest layer: same kernel as a narrower one"
    if config.last_block_n:
        # a narrower last layer only (the case measured); on one layer or past the last width,
        # last_block_n renders what a plain block_n does
        last = max(MIN_DOT, next_pow2(spec.widths[-1]))
        if config.last_block_n > config.block_n:
            return f"last_block_n {config.last_block_n} over block_n {config.block_n}: not searched"
        if spec.depth == 1 or config.last_block_n > last:
            return f"last_block_n {config.last_block_n}: same kernel as a plain block_n"
    return None


def dominated(
    spec: MLPSpec, config: KernelConfig, bucket: int, domain: Mapping[str, tuple[int, ...]]
) -> str | None:
    if config.last_block_n and bucket > LAST_MAX_BUCKET:
        return f"last_block_n in a bucket over {LAST_MAX_BUCKET} rows: slower there"
    return None


def kernel_name(c: KernelConfig) -> str:
    last = f"_last{c.last_block_n}" if c.last_block_n else ""
    return f"_k_persist_m{c.block_m}_n{c.block_n}{last}_k{c.block_k}"


def tiles(spec: MLPSpec, c: KernelConfig) -> dict[str, int]:
    return {
        "BLOCK_M": c.block_m,
        "BLOCK_N": c.block_n,
        "LAST_N": c.last_block_n or c.block_n,
        "BLOCK_K": c.block_k,
    }


STRATEGY = Strategy(
    name="persist",
    domain={
        "block_m": (16, 32, 64, 128),
        "block_n": (32, 64, 128, 256),
        "block_k": (64,),
        "num_warps": (4, 8),
        # on the H200 4 stages and a narrower last layer (64 x 32 tiles under 64 x 64) each
        # took the headline's 1024 rows from 6.97 to 6.71-6.73 us
        "num_stages": (3, 4),
        "last_block_n": (0, 16, 32, 64),  # 0: block_n; only narrower ones (reason)
    },
    rule=reason,
    kernel_name=kernel_name,
    tiles=tiles,
    family=lambda c: "_k_persist",
    planner=plan_tiles,
    dominated=dominated,
)
