"""The two frozen values that flow through mlpgen: what MLP (`MLPSpec`) and how to launch it
(`KernelConfig`). Validation happens here, once, at the edge."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, fields

from mlpgen.activations import ACTIVATIONS
from mlpgen.strategies import STRATEGIES

MAX_WIDTH = 8192
MAX_STEM = 120  # longest module file name (MLPSpec.file_stem)
DTYPES = ("fp16", "bf16", "fp32")


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
    """One point of the search space: a strategy (generator/strategies/<name>.py says what
    each does and which of these fields it searches) and its tiles, warps and stages."""

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
    # for 128 programs) against its first layer's 3.61
    last_block_n: int = 0
    # stream only: every tile moved by TMA on a persistent grid (strategies/stream.py)
    tma: bool = False
    # launch-only, not searched by the space: the call's first kernel launched with programmatic
    # dependent launch (sm_90), so that the next call's launch overlaps this one's run; the tuner
    # tries it on each bucket's fastest configs (decide.pdl_pass). Cells leave it out when False.
    pdl: bool = False

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            names = ", ".join(STRATEGIES)
            raise SpecError(f"unknown strategy {self.strategy!r}; choose from {names}")
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
        object.__setattr__(self, "tma", bool(self.tma))  # the domain's 0/1
        if self.tma and self.strategy != "stream":
            raise SpecError(f"tma is stream's, not {self.strategy}'s")
        if self.chunk < 16 and self.has_kernel:
            raise SpecError(f"chunk must be at least 16 (tl.dot's minimum), got {self.chunk}")
        if self.num_stages < 1:
            raise SpecError(f"num_stages must be >= 1, got {self.num_stages}")

    @property
    def kernel_name(self) -> str:
        """Name of the rendered kernel; launch-only fields (warps, stages) do not change source."""
        name = self._strategy.kernel_name
        return "" if name is None else name(self)

    @property
    def has_kernel(self) -> bool:
        return self._strategy.has_kernel

    @property
    def takes_pdl(self) -> bool:
        """Whether launching the call's first kernel with PDL changes anything."""
        return self._strategy.takes_pdl

    @property
    def _strategy(self):
        return STRATEGIES[self.strategy]

    def to_dict(self) -> dict:
        d = asdict(self)
        if not self.pdl:
            del d["pdl"]
        if not self.last_block_n:
            del d["last_block_n"]
        if not self.tma:
            del d["tma"]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> KernelConfig:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})
