"""The two frozen values that flow through mlpgen: what MLP (`MLPSpec`) and how to launch it
(`KernelConfig`). Validation happens here, once, at the edge."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, fields

from mlpgen.activations import ACTIVATIONS

MAX_WIDTH = 8192
MAX_STEM = 120  # longest module file name (MLPSpec.file_stem)
DTYPES = ("fp16", "bf16", "fp32")
STRATEGIES = (
    "rowblock",
    "persist",
    "stream",
    "stream_tma",
    "split",
    "cluster",
    "layered",
    "chain",
    "epilogue",
    "torch",
)
KERNEL_FREE = ("epilogue", "torch")  # strategies that launch torch ops, no Triton kernel
# strategies whose launches a cell's "pdl" does not change: layered's kernels do not wait for the
# previous kernel, so the module launches them plainly (run193's tuner kept such a "PDL" variant
# at 1024,4096,1024's 1024 rows on noise: 31.39 us against 33.12 for the same launches)
NO_PDL = ("layered", *KERNEL_FREE)


class SpecError(ValueError):
    """An MLP spec or kernel config that cannot be built; the message names the problem."""


@dataclass(frozen=True)
class MLPSpec:
    """An MLP: widths[0] inputs -> ... -> widths[-1] outputs, `act` between layers.

    fp32 specs run their matrix products in tf32 on the GPU (Triton's default for fp32 dots),
    so they match an fp32 reference to ~1e-3, not ~1e-6.
    """

    widths: tuple[int, ...]
    act: str = "gelu"
    out_act: str = "none"
    dtype: str = "fp16"
    bias: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.widths, tuple):
            raise SpecError(f"widths must be a tuple of ints, got {type(self.widths).__name__}")
        if len(self.widths) < 2:
            raise SpecError(
                f"widths needs at least 2 entries (inputs and outputs), got {len(self.widths)}"
            )
        for w in self.widths:
            if isinstance(w, bool) or not isinstance(w, int):
                raise SpecError(f"width {w!r} is not an integer")
            if not 1 <= w <= MAX_WIDTH:
                raise SpecError(f"width {w} is out of range 1..{MAX_WIDTH}")
        for field, value in (("act", self.act), ("out_act", self.out_act)):
            if value not in ACTIVATIONS:
                raise SpecError(
                    f"unknown {field} {value!r}; choose from {', '.join(sorted(ACTIVATIONS))}"
                )
        if self.dtype not in DTYPES:
            raise SpecError(f"unknown dtype {self.dtype!r}; choose from {', '.join(DTYPES)}")
        if not isinstance(self.bias, bool):
            raise SpecError(f"bias must be True or False, got {self.bias!r}")

    @property
    def depth(self) -> int:
        return len(self.widths) - 1

    @property
    def name(self) -> str:
        """Canonical name: module, kernel and study names derive from it."""
        parts = ["mlp", "x".join(map(str, self.widths)), self.act]
        if self.out_act != "none":
            parts.append(f"out{self.out_act}")
        parts.append(self.dtype)
        if not self.bias:
            parts.append("nobias")
        return "_".join(parts)

    @property
    def file_stem(self) -> str:
        """The module's file name without ".py": the canonical name, or where that is longer
        than MAX_STEM (a file name has at most 255 bytes, and the journal, lock and temp files
        beside the module add to it) its start and a hash of the whole name. The module records
        its SPEC, so the name is re-derived from the file, never parsed from its name."""
        if len(self.name) <= MAX_STEM:
            return self.name
        digest = hashlib.sha256(self.name.encode()).hexdigest()[:16]
        return f"{self.name[: MAX_STEM - len(digest) - 1]}_{digest}"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["widths"] = list(self.widths)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> MLPSpec:
        return cls(
            widths=tuple(d["widths"]),
            act=d["act"],
            out_act=d.get("out_act", "none"),
            dtype=d.get("dtype", "fp16"),
            bias=d.get("bias", True),
        )


def parse_widths(text: str) -> tuple[int, ...]:
    """'256,512,256' -> (256, 512, 256), with a one-line SpecError for anything else."""
    items = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not t for t in items):
        raise SpecError(f"--widths {text!r}: expected comma-separated integers like 256,512,256")
    widths = []
    for t in items:
        try:
            widths.append(int(t))
        except ValueError:
            raise SpecError(f"--widths {text!r}: {t!r} is not an integer") from None
    return tuple(widths)


@dataclass(frozen=True)
class KernelConfig:
    """One point of the search space.

    rowblock: each program owns block_m rows through every layer, activations in registers,
      layers unrolled over `chunk`-wide column chunks.
    persist: a persistent grid (at most one program per SM) computes each layer as
      block_m x block_n output tiles with a block_k loop, stages hidden activations through
      L2/global memory and waits at a grid barrier between layers: many SMs read the weights.
    stream: two-layer MLPs only: block_m rows per program, x in registers, the hidden layer
      produced block_n columns at a time in a loop and consumed at once by the second layer.
    split: two-layer MLPs only, for small batches: program (i, j) computes hidden columns
      j*chunk.. of row block i, multiplies them into its share of the output (block_n columns at
      a time) and adds that into an fp32 workspace with atomics; the last program of a row block
      to arrive adds the bias and writes y. The weights are read by many SMs, and no program
      waits for another (no grid barrier).
    cluster: split's programs of one row block as one thread-block cluster (sm_90): each CTA
      stores its partial outputs into the shared memory of the CTA that owns those columns
      (distributed shared memory), and after the cluster's barrier each CTA sums its columns:
      no atomics, no workspace, a fixed summation order. block_m under 16 (tl.dot's minimum)
      runs the rows one by one on the CUDA cores (a cluster per row at block_m 1).
    layered: for large batches: one Triton GEMM per hidden layer (block_m x block_n tiles, a
      block_k loop) with the bias and activation applied before its one store, so the hidden
      activation crosses memory twice instead of four times (no separate activation pass, for
      any activation); the last layer, with nothing to fuse, is a cuBLAS GEMM.
    chain: layered's tiles for every layer, the last one too, each kernel launched with
      programmatic dependent launch on Hopper (PDL: it is scheduled while the previous layer
      runs and waits for that layer's output in-kernel, instead of after the previous kernel
      has drained): middle batches, where two short launches' gap is a large share.
    epilogue: no Triton kernel: one cuBLAS GEMM per layer with the bias and the activation
      fused into cuBLASLt's epilogue (relu, gelu_tanh), which saves eager's separate
      activation pass over the hidden layer (large batches).
    torch: the unfused torch path (no kernel).
    """

    strategy: str = "rowblock"
    block_m: int = 64
    chunk: int = 64
    num_warps: int = 4
    num_stages: int = 1
    block_n: int = 32
    block_k: int = 64
    # persist only: the last layer's tiles are block_m x last_block_n (0: block_n, as the hidden
    # layers'). A last layer narrower than the hidden ones has fewer tiles than they have: on the
    # H200 the headline's 512 -> 256 layer ran alone in 4.04 us with 64 x 64 tiles (64 of them
    # for 128 programs) against its first layer's 3.61 (BENCHMARKS.md, twenty-fourth session)
    last_block_n: int = 0
    # launch-only, not searched by the space: the call's first kernel launched with programmatic
    # dependent launch (sm_90), so that the next call's launch overlaps this one's run; the tuner
    # tries it on each bucket's fastest configs (tune.pdl_pass). Cells leave it out when False.
    pdl: bool = False

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise SpecError(f"unknown strategy {self.strategy!r}; choose from {STRATEGIES}")
        for name in ("block_m", "chunk", "num_warps", "block_n", "block_k"):
            v = getattr(self, name)
            if v < 1 or v & (v - 1):
                raise SpecError(f"{name} must be a power of two, got {v}")
        if self.last_block_n:
            if self.strategy != "persist":
                raise SpecError(f"last_block_n is persist's, not {self.strategy}'s")
            if self.last_block_n < 16 or self.last_block_n & (self.last_block_n - 1):
                raise SpecError(
                    f"last_block_n must be a power of two of at least 16, got {self.last_block_n}"
                )
            if self.last_block_n == self.block_n:  # one kernel, one name: last_block_n 0
                object.__setattr__(self, "last_block_n", 0)
        if self.chunk < 16 and self.has_kernel:
            raise SpecError(f"chunk must be at least 16 (tl.dot's minimum), got {self.chunk}")
        if self.num_stages < 1:
            raise SpecError(f"num_stages must be >= 1, got {self.num_stages}")

    @property
    def kernel_name(self) -> str:
        """Name of the rendered kernel; launch-only fields (warps, stages) do not change source."""
        if not self.has_kernel:
            return ""
        if self.strategy == "persist":
            last = f"_last{self.last_block_n}" if self.last_block_n else ""
            return f"_k_persist_m{self.block_m}_n{self.block_n}{last}_k{self.block_k}"
        if self.strategy in ("layered", "chain"):
            return f"_k_{self.strategy}_m{self.block_m}_n{self.block_n}_k{self.block_k}"
        if self.strategy == "split":
            return f"_k_split_m{self.block_m}_c{self.chunk}_n{self.block_n}_k{self.block_k}"
        if self.strategy == "cluster":
            return f"_k_cluster_m{self.block_m}_c{self.chunk}_k{self.block_k}"
        if self.strategy in ("stream", "stream_tma"):
            return f"_k_{self.strategy}_m{self.block_m}_n{self.block_n}_c{self.chunk}"
        return f"_k_{self.strategy}_m{self.block_m}_c{self.chunk}"

    @property
    def has_kernel(self) -> bool:
        return self.strategy not in KERNEL_FREE

    @property
    def takes_pdl(self) -> bool:
        """Whether launching the call's first kernel with PDL changes anything (NO_PDL)."""
        return self.strategy not in NO_PDL

    def to_dict(self) -> dict:
        d = asdict(self)
        if not self.pdl:
            del d["pdl"]
        if not self.last_block_n:
            del d["last_block_n"]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> KernelConfig:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})
