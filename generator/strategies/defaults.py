"""The heuristic config for a GPU the module was not tuned on: no search, the H200's winners."""

from __future__ import annotations

from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies import infeasible_reason


def heuristic_config(spec: MLPSpec, m: int) -> KernelConfig:
    """A config without search. Narrow MLPs (every width <= 128) run rowblock at every batch;
    wider ones run the torch path from 4096 rows (the fused kernels lost there on the H200)
    and below it persist when they have two layers or a width over 512 (the H200's exhaustive
    logs: the two-layer headline's winner at 1 and 64 rows, the 1024-wide's runner-up at 1 and
    within 2% of its winner at 64), else rowblock. A tile that does not fit (the portable
    MAX_SHARED, the register estimate) falls back to smaller ones."""
    widest = max(spec.widths)
    if widest <= 128:
        tiles = [("rowblock", 16 if m <= 256 else 64, 8)]
    elif m > 2048:
        return KernelConfig(strategy="torch")
    elif spec.depth > 2 and widest <= 512:
        tiles = [("rowblock", 16, 8)]
    else:
        tiles = [("persist", 16 if m <= 16 else 32 if m <= 256 else 64, 4)]
    tiles += [("persist", 16, 4)]
    for strategy, block_m, warps in tiles:
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
