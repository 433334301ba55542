"""What can be launched: the heuristic default config and the feasibility arithmetic that drops
candidates before anything is compiled."""

from __future__ import annotations

from mlpgen.layout import chunks_of, dot_count
from mlpgen.spec import KernelConfig, MLPSpec

DEFAULT_BUCKETS = (1, 16, 64, 256, 1024, 4096, 16384, 65536, 262144)
MAX_FUSED_WIDTH = 1024  # wider layers do not fit in registers: the torch path serves them
MAX_DOTS = 512  # unrolled tl.dot calls; past this, compile time explodes
MAX_REGS = 255  # per thread on NVIDIA GPUs
ELEM_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}


def fusable(spec: MLPSpec) -> bool:
    """Whether the rowblock kernel can hold every width of this spec on chip."""
    return max(spec.widths) <= MAX_FUSED_WIDTH


def padded(width: int, chunk: int) -> int:
    return sum(c.size for c in chunks_of(width, chunk))


def registers_per_thread(spec: MLPSpec, config: KernelConfig) -> int:
    """Rough register estimate: the widest live pair of activations (the input of a layer and
    the output being built), one fp32 accumulator chunk and one weight tile, spread over the
    program's threads. Good enough to drop hopeless candidates, not to rank them."""
    b = ELEM_BYTES[spec.dtype]
    live = max(
        padded(k, config.chunk) + padded(n, config.chunk)
        for k, n in zip(spec.widths[:-1], spec.widths[1:])
    )
    bytes_ = config.block_m * live * b + config.block_m * config.chunk * 4
    bytes_ += config.chunk * config.chunk * b
    return bytes_ // (4 * 32 * config.num_warps)


def infeasible_reason(spec: MLPSpec, config: KernelConfig) -> str | None:
    """Why a config cannot work for a spec, or None when it is worth compiling."""
    if config.strategy == "torch":
        return None
    if not fusable(spec):
        return f"a width over {MAX_FUSED_WIDTH} does not fit on chip"
    dots = dot_count(spec, config)
    if dots > MAX_DOTS:
        return f"{dots} unrolled dots (max {MAX_DOTS})"
    regs = registers_per_thread(spec, config)
    if regs > MAX_REGS:
        return f"~{regs} registers per thread (max {MAX_REGS})"
    if config.block_m < 16:
        return "block_m below 16 (tl.dot's minimum)"
    return None


def heuristic_config(spec: MLPSpec, m: int) -> KernelConfig:
    """A reasonable config without search: small tiles for small batches, more warps when wide."""
    if not fusable(spec):
        return KernelConfig(strategy="torch")
    preferred = 16 if m <= 16 else 32 if m <= 256 else 64
    for block_m in (b for b in (64, 32, 16) if b <= preferred):
        for num_warps in (4, 8):
            for chunk in (64, 128, 32):
                cfg = KernelConfig(block_m=block_m, chunk=chunk, num_warps=num_warps)
                if infeasible_reason(spec, cfg) is None:
                    return cfg
    return KernelConfig(strategy="torch")
