"""The strategies, one file each: `STRATEGIES` maps a strategy's name to everything mlpgen knows
about it (strategies.base.Strategy). Adding a strategy is its file here, its kernel template
templates/kernel_<name>.j2, its tests tests/strategies/test_<name>.py and one line below.

The order is the search order: candidates are listed (and tuner studies named) in it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlpgen.layout import MAX_SHARED
from mlpgen.strategies import (
    cluster,
    epilogue,
    persist,
    rowblock,
    split,
    stream,
    torch,
)
from mlpgen.strategies.base import Strategy

if TYPE_CHECKING:  # mlpgen.spec imports the strategies
    from mlpgen.spec import KernelConfig, MLPSpec

STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        rowblock.STRATEGY,
        persist.STRATEGY,
        stream.STRATEGY,
        split.STRATEGY,
        cluster.STRATEGY,
        epilogue.STRATEGY,
        torch.STRATEGY,
    )
}


def infeasible_reason(
    spec: MLPSpec, config: KernelConfig, max_shared: int = MAX_SHARED
) -> str | None:
    """Why a config cannot work for a spec, or None when it is worth compiling."""
    rule = STRATEGIES[config.strategy].rule
    return None if rule is None else rule(spec, config, max_shared)


# layer-by-layer strategies of earlier versions (a Triton GEMM per layer) that won no cell by 3%
# or more: a module's cells of theirs run the bucket's heuristic default until a re-tune
RETIRED = ("layered", "chain")
GRAPH = "graph_"  # prefix of a TUNED cell's CUDA-graph winner fields (emit.GRAPH)


def upgrade_cell(cell: dict) -> dict:
    """A TUNED cell (and its CUDA-graph winner) written by an earlier mlpgen, in today's
    strategies and fields: stream_tma is stream with tma (same kernel names). A cell of today,
    or of a RETIRED strategy, passes through as it is."""
    out = dict(cell)
    for prefix in ("", GRAPH):
        if out.get(prefix + "strategy") == "stream_tma":
            out[prefix + "strategy"] = "stream"
            out[prefix + "tma"] = True
    return out


__all__ = ["RETIRED", "STRATEGIES", "Strategy", "infeasible_reason", "upgrade_cell"]
