"""The heuristic config for a GPU the module was not tuned on: no search, the H200's winners."""

from __future__ import annotations

from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies import infeasible_reason, split


def heuristic_config(spec: MLPSpec, m: int) -> KernelConfig:
    """A config without search. Narrow MLPs (every width <= 128) run rowblock at every batch;
    wider ones run the torch path from 4096 rows (the fused kernels lost there on the H200)
    and below it split when they have two layers (2.5-3x less GPU time than rowblock at batch
    <= 256), else rowblock up to widths of 512 and persist beyond. A tile that does not fit
    (the portable MAX_SHARED, the register estimate) falls back to smaller ones."""
    widest = max(spec.widths)
    if widest <= 128:
        tiles = [("rowblock", 16 if m <= 256 else 64, 8)]
    elif m > 2048:
        return KernelConfig(strategy="torch")
    elif spec.depth == 2:
        tiles = [("split", 16, 4), ("rowblock", 16, 8)]
    elif widest <= 512:
        tiles = [("rowblock", 16, 8)]
    else:
        tiles = [("persist", 16 if m <= 16 else 32 if m <= 256 else 64, 4)]
    tiles += [("persist", 16, 4)]
    for strategy, block_m, warps in tiles:
        if strategy == "split":
            cfg = KernelConfig(strategy, **split.tiles(m))
        else:
            cfg = KernelConfig(
                strategy,
                block_m=block_m,
                chunk=128 if strategy == "rowblock" and widest > 128 else 64,
                block_n=32,
                num_warps=warps,
                num_stages=1 if strategy == "rowblock" else 3,
            )
        if infeasible_reason(spec, cfg) is None:
            return cfg
    return KernelConfig(strategy="torch")
