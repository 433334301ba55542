"""What can be launched: the search space (one table of per-strategy parameter domains), the
heuristic default config and the feasibility arithmetic that drops candidates before anything is
compiled."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from mlpgen.layout import (
    ELEM_BYTES,
    MIN_DOT,
    chunks_of,
    dot_count,
    live_activations,
    next_pow2,
    padded,
    plan_cluster,
    prefetches,
    rowblock_register_bytes,
)
from mlpgen.spec import KernelConfig, MLPSpec

DEFAULT_BUCKETS = (1, 16, 64, 256, 1024, 4096, 16384, 65536, 262144)
MAX_FUSED_WIDTH = 1024  # wider layers do not fit the rowblock kernel's registers
MAX_DOTS = 512  # unrolled tl.dot calls; past this, compile time explodes
# activations one rowblock program holds (block_m x the widest layer pair): on the H200 both
# fp32 784,1024,1024,10 tiles at 128 KiB ran past the 60 s compile limit (BENCHMARKS.md), the
# headline's largest, 96 KiB (fp16, 64 rows x 256 + 512), compiles in seconds
MAX_HELD_ACTIVATIONS = 96 * 1024
MAX_REGS = 255  # per thread on NVIDIA GPUs
REGISTER_FILE = 65536  # 32-bit registers per SM: one program's threads must fit in it
MAX_SHARED = 99 * 1024  # opt-in shared memory per block on sm86/89; the tuner passes the GPU's

# The search space: strategy -> {KernelConfig field: values}. A new strategy is one more entry
# (plus its template, kernel_<strategy>.j2, and any feasibility rule it needs below).
DOMAINS: dict[str, dict[str, tuple[int, ...]]] = {
    # Domains are kept small on purpose: every candidate is compiled (~5 s each on the H200's
    # CPU, in parallel) before the search. The H200 probe of BENCHMARKS.md narrowed them.
    "rowblock": {
        "block_m": (16, 32, 64),
        "chunk": (64, 128),
        "num_warps": (4, 8),
        # The rowblock kernel is fully unrolled: it has no loop for Triton's software pipeliner,
        # so num_stages changes nothing (tests/test_gpu_tune.py checks the binaries are equal).
        "num_stages": (1,),
    },
    "persist": {
        "block_m": (16, 32, 64, 128),
        "block_n": (32, 64, 128, 256),
        "block_k": (64,),
        "num_warps": (4, 8),
        # on the H200 4 stages and a narrower last layer (64 x 32 tiles under 64 x 64 ones) each
        # took the headline's 1024 rows from 6.97 to 6.71-6.73 us (BENCHMARKS.md, run171)
        "num_stages": (3, 4),
        "last_block_n": (0, 16, 32, 64),  # 0: block_n; only narrower ones (persist_reason)
    },
    "stream": {
        "block_m": (16, 32, 64, 128),
        "block_n": (32, 64),
        "chunk": (64, 128),
        "num_warps": (4, 8),
        # 2 stages make room for block_n 64 at block_m 128 (3 do not fit): on the H200 that
        # tile won the headline's 16384 rows (23.2 us; the 3-stage 128 x 32 took 23.5)
        "num_stages": (2, 3),
    },
    "stream_tma": {
        # stream with every tile moved by TMA, on a persistent grid: on the H200 (BENCHMARKS.md)
        # 128 x 64 tiles with 8 warps and 2 stages ran the headline's 262144 rows in 351 us
        # with chunk 64, 318 with 128 (pointer loads: 366), 128 x 32 in 442, 64 x 32 with 4
        # warps in 654
        "block_m": (128,),
        "block_n": (32, 64),
        "chunk": (64, 128),
        "num_warps": (8,),
        "num_stages": (2,),
    },
    "split": {
        # the H200 probe (BENCHMARKS.md): block_m 16 won at every batch up to 1024, block_n 64
        # never won; the atomics make taller row tiles pointless
        "block_m": (16, 32),
        "chunk": (32, 64, 128),
        "block_n": (128, 256),
        "block_k": (128,),
        # 8 warps gave intermittent wrong sums on the H200 until the template got a barrier
        # between the last program's reads of the workspace and its zeroing stores; with it
        # tests/test_gpu_kernels.py's 8-warp split passed 144 launches (fourth session)
        "num_warps": (4, 8),
        # the layer-1 k loop is unrolled (static_range): no pipeliner loop, stages change nothing
        "num_stages": (1,),
    },
    "cluster": {
        # split's decomposition handed over through a cluster's distributed shared memory: on
        # the H200 (BENCHMARKS.md, fourteenth session) 16-row tiles with 32-column chunks and 4
        # warps were the fastest at 1-64 rows; 8 warps were slower. Tiles under 16 rows run row
        # by row on the CUDA cores (layout.ClusterPlan.fma): one row took 3.11 us at batch 1 and
        # 4.05 at 16 rows against the 16-row tile's 4.21 / 4.45; 2, 4 and 8 rows were slower than
        # one of the two at 1-64 rows (fifteenth session, run116). With four values a remote
        # store (sixteenth session, run121) 32-row tiles with 64-column chunks took 5.70 us at
        # 256 rows against the 16-row tile's 6.60 before; 64-row tiles lost at 64-1024 rows.
        # One row with 64-column chunks (8 CTAs) took 3.94 us at 16 rows (seventeenth, run133);
        # 8 and 16 warps took 0.99-1.15x the best of 2 and 4 at 1-64 rows (eighteenth, run139)
        "block_m": (1, 16, 32),
        "chunk": (32, 64),
        "block_k": (128, 256),
        "num_warps": (2, 4),
        "num_stages": (1,),
    },
    "layered": {
        # the H200 tune of the headline (BENCHMARKS.md) measured 3 and 4 stages and block_n 256
        # too: 4 stages won once by 2%, block_n 256 never, so they are not compiled
        "block_m": (64, 128),
        "block_n": (64, 128),
        "block_k": (64,),
        "num_warps": (4, 8),
        "num_stages": (3,),
    },
    "chain": {
        # the H200 probe (BENCHMARKS.md, eighth session) ran layered's 64 x 64 x 64 tile with 4
        # warps; 32-row and 32-column tiles give the few hundred rows more programs. At 64 rows
        # (ninth session, run59) 16 x 16 tiles with block_k 128 and 2 or 4 warps took 4.70 us
        # against split's 5.82: small tiles spread a small batch's weights over many SMs.
        # 1024,4096,1024 bf16's 64 x 32 x 128 tile at 64 rows took 15.22 us with 4 stages
        # against 15.51 with 3 and 23.15 with 2 back to back, and 22.18 / 26.05 / 43.94 after
        # an L2 flush (twenty-eighth session, run204)
        "block_m": (16, 32, 64),
        "block_n": (16, 32, 64),
        "block_k": (64, 128),
        "num_warps": (2, 4),
        "num_stages": (3, 4),
    },
    "epilogue": {},  # cuBLAS GEMMs with cuBLASLt's bias+activation epilogue: no fields
    "torch": {},  # the unfused torch path: always a candidate, in every bucket
}
# strategies whose block_m tiles the batch rows (a tile taller than the bucket is dominated)
ROW_TILED = ("rowblock", "persist", "stream", "stream_tma", "split", "cluster", "layered", "chain")
# split reduces through fp32 atomics whose traffic grows with M (M x out x hidden/chunk): on the
# H200 it already lost to eager at 1024 rows (BENCHMARKS.md), so larger buckets do not time it
SPLIT_MAX_BUCKET = 4096
# cluster's hand-over grows with the rows like split's (every partial output crosses to its
# owner once); on the H200 it won from 1 to 256 rows (BENCHMARKS.md, run122) and at 1024 rows
# every cluster tile of 16-128 rows lost to eager (run119, run121), so larger buckets skip it
CLUSTER_MAX_BUCKET = 256
# Hopper's thread-block clusters: at most 8 CTAs portably, 16 where the launch allows it
# (triton's launch does for 16), in powers of two here (the slots are summed over an arange)
CLUSTER_SIZES = (2, 4, 8, 16)
# persist's narrower last tiles give a narrow last layer as many tiles as the hidden ones have:
# on the H200 64 x 32 last tiles under 64 x 64 won at 1024 rows and lost at 4096 (17.98 against
# 14.52 us, BENCHMARKS.md, run171), so larger buckets skip them
PERSIST_LAST_MAX_BUCKET = 1024
# layered launches one kernel per layer (the host cost of eager's GEMMs) and pays off by saving
# memory traffic, which small batches do not have: smaller buckets do not time it
LAYERED_MIN_BUCKET = 1024
# chain saves the gap between its launches, which matters where the kernels are short: in the
# H200 probe it beat two plain launches at 256 and 1024 rows and lost at 4096, at 64 rows it
# took 0.81x split's GPU time and at 1 row tied with it (BENCHMARKS.md); the tuner times it from
# 16 up to 4096 rows and decides
CHAIN_BUCKETS = (16, 4096)
# strategies whose chunk pads narrow widths (chunks_of)
CHUNK_PADDED = ("rowblock", "stream", "stream_tma")
# stream_tma's 128-row tiles and descriptor setup pay off at large batches only (on the H200
# it lost to persist at 4096 rows, BENCHMARKS.md)
STREAM_TMA_MIN_BUCKET = 4096
TMA_ALIGN = 16  # bytes: TMA needs 16-byte aligned bases and row strides
MAX_ACC_REGS = 128  # fp32 accumulator registers per thread a tile may take
FMA_OVERHEAD_REGS = 30  # the cluster row form's registers beyond its tiles (cluster_reason)


def fusable(spec: MLPSpec) -> bool:
    """Whether the rowblock kernel can hold every width of this spec on chip."""
    return max(spec.widths) <= MAX_FUSED_WIDTH


def registers_per_thread(spec: MLPSpec, config: KernelConfig) -> int:
    """Rough register estimate of a rowblock program (layout.rowblock_register_bytes), spread
    over its threads. Good enough to drop hopeless candidates, not to rank them."""
    bytes_ = rowblock_register_bytes(spec, config, prefetches(spec, config))
    return bytes_ // (4 * 32 * config.num_warps)


def shared_bytes(spec: MLPSpec, config: KernelConfig) -> int:
    """Shared memory of the largest single tl.dot: its operand tiles staged through shared
    memory plus an fp32 accumulator-sized scratch for layout conversion (Triton reuses the
    buffers of one dot for the next, so the dots do not add up)."""
    b = ELEM_BYTES[spec.dtype]
    tile_m = config.block_m
    tile_k = max(min(config.chunk, max(MIN_DOT, next_pow2(w))) for w in spec.widths[:-1])
    tile_n = max(min(config.chunk, max(MIN_DOT, next_pow2(w))) for w in spec.widths[1:])
    return (tile_m * tile_k + tile_k * tile_n) * b + tile_m * tile_n * 4


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


def rowblock_reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if not fusable(spec):
        return f"a width over {MAX_FUSED_WIDTH} does not fit on chip"
    if config.block_m < MIN_DOT:
        return f"block_m below {MIN_DOT} (tl.dot's minimum)"
    dots = dot_count(spec, config)
    if dots > MAX_DOTS:
        return f"{dots} unrolled dots (max {MAX_DOTS})"
    regs = registers_per_thread(spec, config)
    if (why := register_reason(regs, config.num_warps)) is not None:
        return why
    held = config.block_m * live_activations(spec, config) * ELEM_BYTES[spec.dtype]
    if held > MAX_HELD_ACTIVATIONS:
        return f"{held // 1024} KiB of activations held per program: compile time explodes"
    smem = shared_bytes(spec, config)
    return shared_reason(smem, max_shared)


def tile_reason(config: KernelConfig, elem_bytes: int, max_shared: int) -> str | None:
    """Why a block_m x block_n output tile with a pipelined block_k loop does not fit: its fp32
    accumulator in registers, its num_stages operand buffers in shared memory."""
    acc = config.block_m * config.block_n // (32 * config.num_warps)
    if acc > MAX_ACC_REGS:
        return f"~{acc} accumulator registers per thread (max {MAX_ACC_REGS})"
    smem = (config.block_m + config.block_n) * config.block_k * elem_bytes * config.num_stages
    return shared_reason(smem, max_shared)


def persist_reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
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


def layered_reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if spec.depth < 2:
        return "nothing to fuse: the layered path needs a hidden layer"
    if (why := tile_reason(config, ELEM_BYTES[spec.dtype], max_shared)) is not None:
        return why
    widest = max(MIN_DOT, next_pow2(max(spec.widths[1:-1])))
    if config.block_n > max(64, widest):
        return f"block_n {config.block_n} over every hidden layer: same kernel as a narrower one"
    return None


def chain_reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if spec.depth < 2:
        return "one layer: nothing to chain"
    return persist_reason(spec, config, max_shared)  # persist's tiles, over every layer


def stream_reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if spec.depth != 2:
        return f"the {config.strategy} strategy needs exactly 2 layers"
    b = ELEM_BYTES[spec.dtype]
    k, n1, n2 = spec.widths
    live = config.block_m * (padded(k, config.chunk) * b + padded(n2, config.chunk) * 4)
    live += config.block_m * config.block_n * 4
    regs = live // (4 * 32 * config.num_warps)
    if (why := register_reason(regs, config.num_warps)) is not None:
        return why
    if config.block_n > max(32, next_pow2(n1)):
        return f"block_n {config.block_n} over the hidden width: same kernel as a narrower one"
    # shared memory: num_stages buffers of the loop's two weight tiles, plus x staged as the
    # first dot's operand (H200: m128 n64 c128 at 3 stages asked 262400 bytes, this 262144);
    # TMA stores stage one output chunk too (stream_tma m128 h64 s3: 295352, this 294912)
    k_pad, n2_pad = padded(k, config.chunk), padded(n2, config.chunk)
    smem = config.num_stages * config.block_n * (k_pad + n2_pad) * b + config.block_m * k_pad * b
    if config.strategy == "stream_tma":
        smem += config.block_m * chunks_of(n2, config.chunk)[0].size * b
    return shared_reason(smem, max_shared)


def stream_tma_reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    b = ELEM_BYTES[spec.dtype]
    if spec.depth == 2 and any(w * b % TMA_ALIGN for w in spec.widths):
        return f"TMA needs rows of a multiple of {TMA_ALIGN} bytes"
    return stream_reason(spec, config, max_shared)


def split_reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if spec.depth != 2:
        return "the split strategy needs exactly 2 layers"
    b = ELEM_BYTES[spec.dtype]
    m, c, n, k = config.block_m, config.chunk, config.block_n, config.block_k
    # the hidden slice (fp32 and cast), one partial output tile and one x tile live in
    # registers; the weight tiles are tl.dot's shared-memory operands (counted below)
    live = m * c * (4 + b) + m * n * 4 + m * k * b
    regs = live // (4 * 32 * config.num_warps)
    if (why := register_reason(regs, config.num_warps)) is not None:
        return why
    smem = max((m + c) * k, (m + n) * c) * b + m * n * 4
    return shared_reason(smem, max_shared)


def cluster_reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if spec.depth != 2:
        return "the cluster strategy needs exactly 2 layers"
    plan = plan_cluster(spec, config)
    if plan.ctas not in CLUSTER_SIZES:
        sizes = ", ".join(map(str, CLUSTER_SIZES))
        return f"{plan.ctas} hidden chunks: a cluster takes {sizes} CTAs"
    b = ELEM_BYTES[spec.dtype]
    m, c, kk = config.block_m, config.chunk, config.block_k
    threads = 32 * config.num_warps
    if plan.fma:  # x rows and both weight tiles held at once, the partial outputs
        k_pad = len(plan.k_starts) * kk
        tiles = c * k_pad + plan.np * c
        # an output sum sits in every lane that added its slice (16-byte loads of chunk values)
        replicas = max(1, c * b // 16)
        live = (m * k_pad + tiles) * b + m * plan.np * 4 * replicas
        if m > 1:  # a weight tile widened to fp32 once and kept for every row
            live += max(c * k_pad, plan.np * c) * 4
        # one row widens its tiles as it multiplies them: offline sm_90a compiles (triton 3.9,
        # docs/h200/s17/offline_sass.py) of the headline's row form used 95 / 163 / 168 registers at
        # chunk 32 / 32 / 64 with 4 / 2 / 4 warps, where this counts 73 / 146 / 145 (the
        # estimate before counted a widened tile too, 131 / 262 / 259: chunk 64 went unsearched
        # and took 0.96x chunk 32's GPU time at 16 rows, docs/h200/s17/run132); 256 -> 512 ->
        # 1024 at chunk 32, 4 warps: 254 (this 193); the addresses and sums take the rest
        regs = live // (4 * threads) + FMA_OVERHEAD_REGS
    else:  # the hidden slice, partial outputs, an x tile
        regs = (m * c * (4 + b) + m * plan.np * 4 + m * kk * b) // (4 * threads)
    if (why := register_reason(regs, config.num_warps)) is not None:
        return why
    # past 48 KiB the module opts the launch in (_opt_in_shared), up to the GPU's limit
    smem = max((m + c) * kk, (m + plan.np) * c) * b + plan.buffer_bytes
    return shared_reason(smem, max_shared)


EPILOGUE_ACTS = ("relu", "gelu_tanh")  # activations cuBLASLt's epilogue computes exactly


def epilogue_reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    if spec.act not in EPILOGUE_ACTS:
        return f"cuBLASLt's epilogue has no exact {spec.act} (only {', '.join(EPILOGUE_ACTS)})"
    if not spec.bias or spec.depth < 2:
        return "nothing to fuse: the epilogue path needs biases and a hidden layer"
    return None


# strategy -> why a config of it cannot work (None: worth compiling); a strategy without an
# entry has no rule yet and every config of it is compiled and left to verification.
RULES = {
    "rowblock": rowblock_reason,
    "persist": persist_reason,
    "stream": stream_reason,
    "stream_tma": stream_tma_reason,
    "split": split_reason,
    "cluster": cluster_reason,
    "layered": layered_reason,
    "chain": chain_reason,
    "epilogue": epilogue_reason,
}


def infeasible_reason(
    spec: MLPSpec, config: KernelConfig, max_shared: int = MAX_SHARED
) -> str | None:
    """Why a config cannot work for a spec, or None when it is worth compiling."""
    rule = RULES.get(config.strategy)
    return None if rule is None else rule(spec, config, max_shared)


def dominated_reason(spec: MLPSpec, config: KernelConfig, bucket: int) -> str | None:
    """Why a feasible config is not worth timing at this bucket: a row tile taller than the
    bucket's rows (rounded up to a power of two, at least 16 for a tl.dot tile) only adds
    masked-off rows to the one program that does all the work; a chunk wider than every layer
    renders the same kernel as the smallest such chunk of the domain."""
    domain = DOMAINS.get(config.strategy, {})
    rows = next_pow2(bucket)
    if not (config.strategy == "cluster" and config.block_m < MIN_DOT):  # tl.dot's 16 rows
        rows = max(MIN_DOT, rows)
    if config.strategy in ROW_TILED and config.block_m > rows:
        return f"block_m {config.block_m} over the bucket's {rows} rows"
    if config.strategy == "persist" and config.last_block_n and bucket > PERSIST_LAST_MAX_BUCKET:
        return f"last_block_n in a bucket over {PERSIST_LAST_MAX_BUCKET} rows: slower there"
    if config.strategy == "layered" and bucket < LAYERED_MIN_BUCKET:
        return f"layered in a bucket under {LAYERED_MIN_BUCKET} rows: one launch per layer"
    if config.strategy == "chain" and not CHAIN_BUCKETS[0] <= bucket <= CHAIN_BUCKETS[1]:
        lo, hi = CHAIN_BUCKETS
        return f"chain in a bucket outside {lo}-{hi} rows: its launches' gap matters less there"
    if config.strategy == "stream_tma" and bucket < STREAM_TMA_MIN_BUCKET:
        return f"stream_tma in a bucket under {STREAM_TMA_MIN_BUCKET} rows: descriptor setup"
    if config.strategy == "cluster" and bucket > CLUSTER_MAX_BUCKET:
        return f"cluster over {CLUSTER_MAX_BUCKET} rows: its hand-over grows with the bucket"
    if config.strategy == "split":
        if bucket > SPLIT_MAX_BUCKET:
            return f"split over {SPLIT_MAX_BUCKET} rows: its atomic reduction grows with the bucket"
        for field, width in (("chunk", spec.widths[1]), ("block_n", spec.widths[-1])):
            same = min((v for v in domain[field] if v >= width), default=max(domain[field]))
            if getattr(config, field) > same:
                return f"{field} {getattr(config, field)} over the width: same kernel as {same}"
    if config.strategy in CHUNK_PADDED:
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

    def __contains__(self, config: KernelConfig) -> bool:
        return config in self.candidates

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
        ("nothing to chain", "depth"),
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
            if reason is None and strategy == "cluster" and not clusters:
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


def split_tiles(m: int) -> dict:
    """The split strategy's tiles for a batch of m rows: the H200 probe's winners
    (BENCHMARKS.md). Wider hidden chunks as rows grow keep the atomic traffic in check."""
    return dict(
        block_m=16,
        chunk=32 if m <= 64 else 64 if m <= 256 else 128,
        block_n=256 if m <= 64 else 128,
        block_k=128,
        num_warps=4,
        num_stages=1,
    )


def heuristic_config(spec: MLPSpec, m: int) -> KernelConfig:
    """A config without search, for GPUs the module was not tuned on. The choices are the H200
    winners of BENCHMARKS.md: narrow MLPs (every width <= 128) run rowblock at every batch;
    wider ones run the torch path from 4096 rows (the fused kernels lost there) and below it
    split when they have two layers (2.5-3x less GPU time than rowblock at batch <= 256),
    else rowblock up to widths of 512 and persist beyond. A tile that does not fit (the
    portable MAX_SHARED, the register estimate) falls back to smaller ones."""
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
            cfg = KernelConfig(strategy, **split_tiles(m))
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


def strategy_seeds(spec: MLPSpec, m: int, max_shared: int = MAX_SHARED) -> list[KernelConfig]:
    """One sensible config per kernel strategy (the H200 winners' tiles of BENCHMARKS.md),
    measured early by the tuner so that a small budget compares strategies, not only the tiles
    of the default's strategy (the local search never leaves a strategy)."""
    wide = max(spec.widths) > 128
    small = m <= 1024
    seeds = [
        KernelConfig(
            "rowblock",
            block_m=16 if m <= 256 else 64,
            chunk=128 if wide else 64,
            num_warps=8,
        ),
        KernelConfig(
            "stream",
            block_m=16 if small else 128,
            block_n=64 if small else 32,
            chunk=64,
            num_warps=8,
            num_stages=3,
        ),
        KernelConfig(
            "persist",
            block_m=16 if m <= 16 else 32 if m <= 256 else 64 if m <= 4096 else 128,
            block_n=32 if m <= 256 else 64 if m <= 4096 else 128,
            num_warps=4 if m <= 4096 else 8,
            num_stages=3,
        ),
    ]
    if m <= SPLIT_MAX_BUCKET:
        seeds.append(KernelConfig("split", **split_tiles(m)))
    if m <= CLUSTER_MAX_BUCKET:  # the H200 probes' best tiles (kept only where clusters run)
        seeds.append(KernelConfig("cluster", block_m=16, chunk=32, block_k=128, num_warps=4))
    if m <= 16:  # one row a cluster won the headline's 1 and 16 rows (run116)
        seeds.append(KernelConfig("cluster", block_m=1, chunk=32, block_k=128, num_warps=4))
    if 64 < m <= CLUSTER_MAX_BUCKET:  # 32 rows, 8 CTAs won the headline's 256 rows (run121)
        seeds.append(KernelConfig("cluster", block_m=32, chunk=64, block_k=128, num_warps=4))
    if m >= STREAM_TMA_MIN_BUCKET:  # the H200 probe's best TMA tile
        seeds.append(
            KernelConfig("stream_tma", block_m=128, block_n=64, chunk=64, num_warps=8, num_stages=2)
        )
    if m >= LAYERED_MIN_BUCKET:  # the tile that won at every batch of the H200 probe
        seeds.append(
            KernelConfig("layered", block_m=128, block_n=128, block_k=64, num_warps=8, num_stages=3)
        )
    return [c for c in seeds if infeasible_reason(spec, c, max_shared) is None]
