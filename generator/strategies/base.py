"""The shape of a strategy: one frozen value holding everything mlpgen knows about one way of
running an MLP, from its search domain to the names of the kernels it renders."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mlpgen.layout import MIN_DOT

if TYPE_CHECKING:  # mlpgen.spec imports the strategies
    from mlpgen.spec import KernelConfig, MLPSpec

# why a config cannot work for a spec with `max_shared` bytes of shared memory (None: it can)
Rule = Callable[["MLPSpec", "KernelConfig", int], "str | None"]
# why a feasible config is not worth timing at a bucket, given the domain it was drawn from
Dominated = Callable[["MLPSpec", "KernelConfig", int, Mapping[str, tuple[int, ...]]], "str | None"]
UNBOUNDED = 1 << 62


def _no_args(spec: MLPSpec, config: KernelConfig) -> dict:
    return {}


@dataclass(frozen=True)
class Strategy:
    """One strategy: its parameter domain, feasibility rule, planner, kernel names and
    the facts the tuner and the module act on. The kernel template is
    templates/kernel_<name>.j2; it receives the planner's result as `plan` (and `layers`)."""

    name: str
    # the searched KernelConfig fields and their values (empty: the strategy has no fields)
    domain: Mapping[str, tuple[int, ...]]
    # why a config cannot work (registers, shared memory, legal shapes); None: every config
    # is compiled and left to verification
    rule: Rule | None = None
    # the config's @triton.jit name (None: the strategy launches torch ops, no Triton kernel)
    kernel_name: Callable[[KernelConfig], str] | None = None
    # what the template iterates over (layout's plans); only strategies with a kernel have one
    planner: Callable[[MLPSpec, KernelConfig], object] | None = None
    # the tile sizes its kernel takes as tl.constexpr arguments after M (name -> value, in
    # signature order): configs that differ only in them share one @triton.jit function, whose
    # name `family` gives (None: the config's kernel has its tiles written in, kernel_name)
    tiles: Callable[[MLPSpec, KernelConfig], dict[str, int]] | None = None
    family: Callable[[KernelConfig], str] | None = None
    # more template inputs beside name, spec, config, plan, dtypes and activation macros
    template_args: Callable[[MLPSpec, KernelConfig], dict] = _no_args
    # the buckets it is timed in, and why not outside them
    rows: tuple[int, int] = (1, UNBOUNDED)
    rows_why: str = ""
    # further reasons a feasible config is not worth timing (a wider field renders the same)
    dominated: Dominated | None = None
    # its block_m tiles the batch rows: a tile taller than the bucket only adds masked rows
    row_tiled: bool = True
    # the smallest row tile it takes (tl.dot's 16; cluster's row-by-row form goes to 1)
    min_block_m: int = MIN_DOT
    # its chunk pads narrow widths (layout.chunks_of): chunks past the widest layer are equal
    chunk_padded: bool = False
    # launching the call's first kernel with programmatic dependent launch changes anything
    takes_pdl: bool = True
    # it launches thread-block clusters (sm_90+ only), by mlpgen.runtime only: its kernels are
    # rendered there (mlpgen.runtime.cluster), not carried by the module
    clusters: bool = False

    @property
    def has_kernel(self) -> bool:
        return self.kernel_name is not None

    def kernel_names(self, spec: MLPSpec, config: KernelConfig) -> list[str]:
        """The module's KERNELS entries of this config: its kernel_name (none without a kernel)."""
        return [] if self.kernel_name is None else [self.kernel_name(config)]

    def function_name(self, spec: MLPSpec, config: KernelConfig) -> str:
        """The @triton.jit function that runs the config: its family's where its tiles are
        arguments, else its own kernel_name."""
        if self.tiles is not None and self.tiles(spec, config):
            return self.family(config)
        return self.kernel_name(config)

    def outside_rows(self, bucket: int) -> str | None:
        """Why a bucket is outside the rows it is timed at, or None."""
        lo, hi = self.rows
        if bucket < lo:
            return f"{self.name} in a bucket under {lo} rows: {self.rows_why}"
        if bucket > hi:
            return f"{self.name} in a bucket over {hi} rows: {self.rows_why}"
        return None
