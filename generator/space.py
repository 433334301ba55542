"""What can be launched: the search space, drawn from the strategies' domains
(mlpgen.strategies), split per bucket into the candidates worth timing and the configs dropped
before anything is compiled, each with its reason."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from mlpgen.layout import MAX_SHARED, MIN_DOT, next_pow2
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies import STRATEGIES, infeasible_reason
from mlpgen.strategies.defaults import heuristic_config

DEFAULT_BUCKETS = (1, 16, 64, 256, 1024, 4096, 16384, 65536, 262144)

# The searched table: strategy -> {KernelConfig field: values}, each strategy's own domain.
# Domains are kept small on purpose: every candidate is compiled (~5 s each on the H200's CPU,
# in parallel) before the search. Tests of the tuner's logic pin this table to a fixed one.
DOMAINS: dict[str, dict[str, tuple[int, ...]]] = {
    name: dict(s.domain) for name, s in STRATEGIES.items()
}


def dominated_reason(spec: MLPSpec, config: KernelConfig, bucket: int) -> str | None:
    """Why a feasible config is not worth timing at this bucket: a row tile taller than the
    bucket's rows (rounded up to a power of two, at least 16 for a tl.dot tile) only adds
    masked-off rows to the one program that does all the work; a strategy outside the buckets
    it is timed at; a chunk wider than every layer renders the same kernel as the smallest such
    chunk of the domain; and the strategy's own rules."""
    strategy = STRATEGIES[config.strategy]
    domain = DOMAINS.get(config.strategy, {})
    rows = next_pow2(bucket)
    if config.block_m >= MIN_DOT or strategy.min_block_m >= MIN_DOT:
        rows = max(MIN_DOT, rows)
    if strategy.row_tiled and config.block_m > rows:
        return f"block_m {config.block_m} over the bucket's {rows} rows"
    if (why := strategy.outside_rows(bucket)) is not None:
        return why
    if strategy.dominated is not None:
        if (why := strategy.dominated(spec, config, bucket, domain)) is not None:
            return why
    if strategy.chunk_padded:
        widest = max(MIN_DOT, next_pow2(max(spec.widths)))
        same = min((c for c in domain["chunk"] if c >= widest), default=max(domain["chunk"]))
        if config.chunk > same:
            return f"chunk {config.chunk} over the widest layer: same kernel as chunk {same}"
    return None


def configs_of(strategy: str) -> list[KernelConfig]:
    """Every point of one strategy's domain, in table order (points that make one config, such
    as persist's last_block_n equal to its block_n and 0, once)."""
    domain = DOMAINS[strategy]
    names = list(domain)
    points = (
        KernelConfig(strategy=strategy, **dict(zip(names, values)))
        for values in itertools.product(*(domain[n] for n in names))
    )
    return list(dict.fromkeys(points))


@dataclass(frozen=True)
class SearchSpace:
    """The candidates worth timing for one (spec, bucket), and what was dropped and why."""

    bucket: int
    candidates: tuple[KernelConfig, ...]
    dropped: tuple[tuple[KernelConfig, str], ...]
    # the candidates as a set: the search asks "in the space?" many times a step, and a scan
    # of a few hundred dataclass comparisons each time was a large share of its own CPU time
    members: frozenset = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "members", frozenset(self.candidates))

    def __contains__(self, config: KernelConfig) -> bool:
        return config in self.members

    def within(self, configs) -> SearchSpace:
        """The candidates among `configs` (the space as an earlier search recorded it), the
        others dropped: a replay searches the space its measurements cover."""
        keep = tuple(c for c in self.candidates if c in configs)
        gone = tuple((c, "not in the recorded space") for c in self.candidates if c not in configs)
        return SearchSpace(self.bucket, keep, self.dropped + gone)

    def domains(self) -> dict[str, dict[str, tuple[int, ...]]]:
        """Per strategy, the values of each searched field that some candidate uses: what the
        sampler draws from (every strategy with a candidate appears, torch with no fields)."""
        out: dict[str, dict[str, tuple[int, ...]]] = {}
        for c in self.candidates:
            fields = out.setdefault(c.strategy, {n: () for n in DOMAINS[c.strategy]})
            for n in fields:
                v = getattr(c, n)
                if v not in fields[n]:
                    fields[n] = tuple(sorted(fields[n] + (v,)))
        return out

    def dropped_counts(self) -> dict[str, int]:
        """How many candidates each kind of reason dropped ("registers", "dots", ...)."""
        counts: dict[str, int] = {}
        for _, reason in self.dropped:
            kind = reason_kind(reason)
            counts[kind] = counts.get(kind, 0) + 1
        return dict(sorted(counts.items()))


def reason_kind(reason: str) -> str:
    for word, kind in (
        ("registers", "registers"),
        ("dots", "dots"),
        ("compile time", "compile time"),
        ("shared", "shared memory"),
        ("bucket", "dominated"),
        ("same kernel", "dominated"),
        ("chip", "too wide"),
        ("2 layers", "depth"),
        ("epilogue", "no epilogue"),
        ("hidden layer", "depth"),
        ("tl.dot", "dot shape"),
        ("a cluster takes", "cluster size"),
        ("clusters need", "no clusters"),
        ("not searched", "not searched"),
    ):
        if word in reason:
            return kind
    return "other"


NO_CLUSTERS = "thread-block clusters need an sm_90 GPU"


def search_space(
    spec: MLPSpec, bucket: int, max_shared: int = MAX_SHARED, clusters: bool = False
) -> SearchSpace:
    """Every table config, split into the feasible candidates for this bucket and the dropped
    ones with their reasons. The heuristic default is always a candidate when it is feasible,
    and the torch path always is. clusters: the GPU launches thread-block clusters (sm_90+)."""
    default = heuristic_config(spec, bucket)
    candidates, dropped = [], []
    for strategy in DOMAINS:
        for config in configs_of(strategy):
            reason = infeasible_reason(spec, config, max_shared)
            if reason is None and STRATEGIES[strategy].clusters and not clusters:
                reason = NO_CLUSTERS
            if reason is None and config != default:
                reason = dominated_reason(spec, config, bucket)
            if reason is None:
                candidates.append(config)
            else:
                dropped.append((config, reason))
    if default not in candidates and infeasible_reason(spec, default, max_shared) is None:
        candidates.append(default)
    return SearchSpace(bucket, tuple(candidates), tuple(dropped))


__all__ = [
    "DEFAULT_BUCKETS",
    "DOMAINS",
    "SearchSpace",
    "configs_of",
    "dominated_reason",
    "heuristic_config",
    "infeasible_reason",
    "search_space",
]
