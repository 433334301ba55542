"""chain: one Triton GEMM per layer (block_m x block_n tiles, a block_k loop) with the bias and
activation applied before its one store, so a hidden activation crosses memory twice instead of
four times (no separate activation pass, for any activation). Each kernel is launched with
programmatic dependent launch on Hopper (it is scheduled while the previous layer runs and
waits for that layer's output in-kernel, instead of after the previous kernel has drained):
middle batches, where the gap between two short launches is a large share
(templates/kernel_chain.j2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlpgen.layout import plan_tiles
from mlpgen.strategies import persist
from mlpgen.strategies.base import Strategy

if TYPE_CHECKING:  # mlpgen.spec imports the strategies
    from mlpgen.spec import KernelConfig, MLPSpec

GROUP_M = 8  # row tiles per program group (consecutive programs share weight tiles in L2)


def reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if spec.depth < 2:
        return "one layer: nothing to chain"
    return persist.reason(spec, config, max_shared)  # persist's tiles, over every layer


def kernel_name(c: KernelConfig) -> str:
    """The kernels' common prefix: layer i's kernel is kernel_name + "_l<i>"."""
    return f"_k_chain_m{c.block_m}_n{c.block_n}_k{c.block_k}"


STRATEGY = Strategy(
    name="chain",
    domain={
        # on the H200 a 64 x 64 x 64 tile with 4 warps ran a few hundred rows; 32-row
        # and 32-column tiles give them more programs. At 64 rows 16 x 16 tiles with block_k
        # 128 and 2 or 4 warps took 4.70 us against split's 5.82: small tiles spread a small
        # batch's weights over many SMs. 1024,4096,1024 bf16's 64 x 32 x 128 tile at 64 rows
        # took 15.22 us with 4 stages against 15.51 with 3 and 23.15 with 2 back to back
        "block_m": (16, 32, 64),
        "block_n": (16, 32, 64),
        "block_k": (64, 128),
        "num_warps": (2, 4),
        "num_stages": (3, 4),
    },
    rule=reason,
    kernel_name=kernel_name,
    tiles=lambda spec, c: {"BLOCK_M": c.block_m, "BLOCK_N": c.block_n, "BLOCK_K": c.block_k},
    family=lambda c: "_k_chain",
    planner=plan_tiles,
    layer_kernels=lambda spec: spec.depth,
    template_args=lambda spec, config: {"group_m": GROUP_M},
    # it saves the gap between its launches, which matters where the kernels are short: on the
    # H200 it beat two plain launches at 256 and 1024 rows and lost at 4096; at 64 rows it took
    # 0.81x split's GPU time and at 1 row tied with it
    rows=(16, 4096),
    rows_why="its launches' gap matters less there",
)
