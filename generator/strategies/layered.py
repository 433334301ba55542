"""layered (large batches): one Triton GEMM per hidden layer (block_m x block_n tiles, a block_k
loop) with the bias and activation applied before its one store, so the hidden activation
crosses memory twice instead of four times (no separate activation pass, for any activation);
the last layer, with nothing to fuse, is a cuBLAS GEMM (templates/kernel_layered.j2)."""

from __future__ import annotations

from mlpgen.layout import ELEM_BYTES, MIN_DOT, next_pow2, plan_hidden_tiles, tile_reason
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies.base import UNBOUNDED, Strategy

GROUP_M = 8  # row tiles per program group (consecutive programs share weight tiles in L2)


def reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if spec.depth < 2:
        return "nothing to fuse: the layered path needs a hidden layer"
    if (why := tile_reason(config, ELEM_BYTES[spec.dtype], max_shared)) is not None:
        return why
    widest = max(MIN_DOT, next_pow2(max(spec.widths[1:-1])))
    if config.block_n > max(64, widest):
        return f"block_n {config.block_n} over every hidden layer: same kernel as a narrower one"
    return None


def kernel_name(c: KernelConfig) -> str:
    return f"_k_{c.strategy}_m{c.block_m}_n{c.block_n}_k{c.block_k}"


STRATEGY = Strategy(
    name="layered",
    domain={
        # on the H200 3 and 4 stages and block_n 256 were measured too: 4 stages won once by
        # 2%, block_n 256 never, so they are not compiled
        "block_m": (64, 128),
        "block_n": (64, 128),
        "block_k": (64,),
        "num_warps": (4, 8),
        "num_stages": (3,),
    },
    rule=reason,
    kernel_name=kernel_name,
    planner=plan_hidden_tiles,
    layer_kernels=lambda spec: spec.depth - 1,
    template_args=lambda spec, config: {"group_m": GROUP_M},
    # the tile that won at every batch on the H200
    seeds=lambda spec, m: [
        KernelConfig("layered", block_m=128, block_n=128, block_k=64, num_warps=8, num_stages=3)
    ],
    # one launch per layer (the host cost of eager's GEMMs) pays off by saving memory traffic,
    # which small batches do not have
    rows=(1024, UNBOUNDED),
    rows_why="one launch per layer",
    # its kernels do not wait for the previous kernel, so the module launches them plainly
    takes_pdl=False,
    several_kernels=True,
)
