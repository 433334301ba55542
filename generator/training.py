"""The generated training path: a forward that saves what the backward needs, and a backward of
Triton kernels (templates/training.j2), rendered once per spec into a file that
mlpgen.runtime.train imports for a generated module (the module itself carries none).

Layer l computes Z_l = H_{l-1} W_l^T + b_l and H_l = act(Z_l) (H_{-1} = x, H_{L-1} = y). The
backward carries dZ_l = dH_l * act'(Z_l) down the layers (dH_{l-1} = dZ_l W_l) and forms
dW_l = dZ_l^T H_{l-1} and db_l = sum over rows of dZ_l. Block sizes are tl.constexpr arguments
of the kernels, so one source serves every bucket's TrainConfig; the config only changes how they
are launched.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import ClassVar

from mlpgen.activations import ACTIVATIONS
from mlpgen.layout import ELEM_BYTES, MIN_DOT, Layer, next_pow2, plan_layers
from mlpgen.spec import KernelConfig, MLPSpec, SpecError

# what a later tuner may search per bucket (every point is a valid TrainConfig)
DOMAIN = {
    "block_m": (16, 32, 64, 128),
    "block_n": (16, 32, 64, 128),
    "block_k": (16, 32, 64),
    "num_warps": (2, 4, 8),
    "num_stages": (1, 2, 3, 4),
    "split": (1, 2, 4, 8, 16, 32, 64, 128, 256),
    "fused": (0, 1),
    "recompute": (0, 1),
    "one_pass": (0, 1),
    "split_k": (0, 1),
}
# TrainConfig's yes/no fields (the domain's 0/1)
FLAGS = ("fused", "recompute", "one_pass", "split_k")
# the H200's SMs: how many programs the weight-gradient launch (and a split_k layer) should fill
TARGET_PROGRAMS = 132
MIN_SPLIT_ROWS = 256  # a split of the rows smaller than this costs more to reduce than it saves
MAX_WORKSPACE = 64 << 20  # bytes of fp32 weight-gradient partials a split may take
FUSED_WIDTH = 128  # default_for fuses the layers of MLPs this narrow at every M
# The fused kernels are searched only where a row's multiply-adds through every layer are at most
# this many: a fused program carries its rows through each whole layer alone, so where a row is
# millions of multiply-adds the tiled launches win at every M (in the trial log of the shipped
# 1024 -> 4096 -> 1024 module, 8.4M a row, every fused step timed took 1.5x to 250x its bucket's
# best)
FUSED_MAX_MACS = 1 << 21
WIDE_LAYER = 1024  # default_for's small-M tiles are 128 columns wide from layers this wide
# split_k is searched only where it cuts a reduction at least this long: a split adds a launch
# and a round trip of fp32 partials, which pays where a program streams much weight. On the H100
# (`bash benchmarks/retune_train.sh NAME`), default_for's step at one row with split_k took 72.0
# against 96.6 us of GPU time on the 1024 -> 4096 -> 1024 spec (reductions of 1024 and 4096: its
# trial log in tuned/), and 48.4 against 44.6 on 256 -> 512 -> 256 (256 and 512)
SPLIT_K_MIN = 1024


@dataclass(frozen=True)
class TrainConfig:
    """How the module launches the training kernels for one bucket. block_m x block_n output
    tiles with a block_k reduction loop, for the forward GEMMs, the input gradient and (as
    block_n x block_k tiles stepping block_m rows) the weight gradient; split: the weight
    gradient's rows cut into this many ranges whose fp32 partials are summed in a fixed order."""

    block_m: int = 64
    block_n: int = 64
    block_k: int = 32
    num_warps: int = 4
    num_stages: int = 2
    split: int = 1
    # one program per block_m rows through every layer (one launch for the forward, one for
    # the input gradient), each layer's output handed to the next through memory the program
    # itself wrote; else a launch per layer tiled over rows and columns
    fused: bool = False
    # the forward keeps only x (and the parameters): the call's forward is the tuned inference
    # kernel, and the backward runs the training forward again for what it needs. Less memory
    # than eager; faster where the inference kernel's lead outweighs a second forward
    recompute: bool = False
    # the backward is one launch of `split` persistent programs, each carrying its rows' dZ
    # down every layer in registers (never to memory) and summing every layer's dW and db over
    # those rows in fp32 registers; train_reduce adds the programs' partials in order. With
    # recompute the kernel runs the forward of its rows first, in registers, and reads only x
    # and dL/dy. Only where every layer fits one tile (one_pass_fits)
    one_pass: bool = False
    # the launch-per-layer forward and input gradient cut a layer's reduction into ranges where
    # its output tiles are fewer than TARGET_PROGRAMS (reduction_split): a program per tile and
    # range writes its fp32 partial, then a launch sums the ranges in order and applies the
    # bias and act (forward) or act' (input gradient). At small M a wide layer has a few column
    # tiles, each streaming its weights over the whole reduction on one SM
    split_k: bool = False
    strategy: ClassVar[str] = "kernels"  # the tuner's name for a TrainConfig candidate

    def __post_init__(self) -> None:
        for name in FLAGS:
            object.__setattr__(self, name, bool(getattr(self, name)))  # the domain's 0/1
        for f in fields(self):
            if f.name in FLAGS:
                continue
            v = getattr(self, f.name)
            if not isinstance(v, int) or v < 1:
                raise SpecError(f"train {f.name} must be a positive integer, got {v!r}")
            if f.name != "num_stages" and v & (v - 1):
                raise SpecError(f"train {f.name} must be a power of two, got {v}")
        for name in ("block_m", "block_n", "block_k"):
            if getattr(self, name) < MIN_DOT:
                raise SpecError(f"train {name} must be at least {MIN_DOT} (tl.dot's minimum)")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> TrainConfig:
        return cls(**{f.name: d[f.name] for f in fields(cls) if f.name in d})


@dataclass(frozen=True)
class TorchBackward:
    """The train candidate that keeps the torch path: on the GPU a training call runs eager's
    own ops (the module's `reference`) under autograd, the same step as nn.Sequential's. A
    TUNED cell holds it as "train": {"backward": "torch"}."""

    strategy: ClassVar[str] = "torch"

    def to_dict(self) -> dict:
        return {"backward": "torch"}


@dataclass(frozen=True)
class LtBackward:
    """The train candidate whose GEMMs are cuBLASLt's (mlpgen.runtime.cublaslt): the forward
    keeps each hidden layer's pre-activation (or ReLU mask) as its GEMM's epilogue writes it,
    and the backward's GEMMs apply act' in theirs, so no pass of its own applies the activation
    or its derivative. Where cublaslt.fits the spec (relu and gelu_tanh) and on a GPU; a TUNED
    cell holds it as "train": {"backward": "cublaslt"}."""

    strategy: ClassVar[str] = "cublaslt"

    def to_dict(self) -> dict:
        return {"backward": self.strategy}


TrainChoice = TrainConfig | TorchBackward | LtBackward


def train_choice(d: dict) -> TrainChoice:
    """A TUNED cell's "train" value as its candidate."""
    named = {c.strategy: c for c in (TorchBackward(), LtBackward())}
    return named[d["backward"]] if "backward" in d else TrainConfig.from_dict(d)


def train_layers(spec: MLPSpec) -> tuple[Layer, ...]:
    """The layers (widths, activation, last) the training kernels run, in order."""
    return plan_layers(spec, KernelConfig())


def grad_inputs(spec: MLPSpec) -> list[str | None]:
    """Per layer, what the backward reads for act' (mlpgen.activations.Activation.saved): "z"
    (the forward stores the pre-activation), "h" (the layer's output, kept anyway), or None."""
    return [ACTIVATIONS[layer.act].saved for layer in train_layers(spec)]


@dataclass(frozen=True)
class FusedLayer:
    """A layer as the fused kernels (every layer in one launch) name its buffers."""

    index: int
    k: int
    n: int
    last: bool
    src: str  # its input H_{l-1}: x_ptr or the layer below's h pointer
    z: str | None  # its pre-activation Z_l, where the forward stores it
    h: str  # its output H_l (y for the last layer)
    saved: str | None  # what its act' reads: z or h, None for the identity
    dz: str  # dL/dZ_l: gy_ptr itself where the last layer has no out_act
    below_saved: str | None  # what the layer below's act' reads (None: none, or no layer)
    below_dz: str  # where dH_{l-1} goes: dL/dZ_{l-1}, or dx_ptr below the first layer


def fused_layers(spec: MLPSpec) -> tuple[FusedLayer, ...]:
    kinds = grad_inputs(spec)
    saved = [None if kind is None else f"{kind}{i}_ptr" for i, kind in enumerate(kinds)]
    return tuple(
        FusedLayer(
            index=(i := layer.index),
            k=layer.k,
            n=layer.n,
            last=layer.last,
            src="x_ptr" if i == 0 else f"h{i - 1}_ptr",
            z=f"z{i}_ptr" if kinds[i] == "z" else None,
            h=f"h{i}_ptr",
            saved=saved[i],
            dz="gy_ptr" if layer.last and kinds[i] is None else f"dz{i}_ptr",
            below_saved=saved[i - 1] if i > 0 else None,
            below_dz="dx_ptr" if i == 0 else f"dz{i - 1}_ptr",
        )
        for layer in train_layers(spec)
    )


# one_pass holds every layer's fp32 dW (and its dZ, input and weight tiles) in registers: at
# most this many accumulator registers per thread, and no layer wider than one tile; with
# recompute also every layer's input (and Z where act' reads it) for a row tile
ONE_PASS_ACC_REGS = 96
ONE_PASS_HELD_REGS = 64
ONE_PASS_WIDTH = 128


@dataclass(frozen=True)
class PassLayer:
    """A layer as train_backward_one_pass holds it: whole tiles of its widths padded to powers of
    two (kp, np_), and where its dW [n, k] and db [n] lie in a program's row of the partials."""

    index: int
    k: int
    n: int
    kp: int
    np_: int
    w_at: int
    b_at: int


def one_pass_layers(spec: MLPSpec) -> tuple[tuple[PassLayer, ...], int]:
    """(the layers, the parameter count P): a program's partials are P fp32 values, each layer's
    dW then db, layer by layer (so one train_reduce sums them all into a flat gradient)."""
    layers, at = [], 0
    for layer in train_layers(spec):
        kp, np_ = max(MIN_DOT, next_pow2(layer.k)), max(MIN_DOT, next_pow2(layer.n))
        b_at = at + layer.n * layer.k
        layers.append(PassLayer(layer.index, layer.k, layer.n, kp, np_, at, b_at))
        at = b_at + layer.n * spec.bias
    return tuple(layers), at


def one_pass_fits(
    spec: MLPSpec, num_warps: int, block_m: int = MIN_DOT, recompute: bool = False
) -> bool:
    """Whether the one_pass backward can run the spec with num_warps warps: every width one
    tile, every layer's padded dW within ONE_PASS_ACC_REGS registers per thread; with recompute,
    a block_m-row tile of every layer's input (and Z where act' reads it) within
    ONE_PASS_HELD_REGS more."""
    layers, _ = one_pass_layers(spec)
    threads = 32 * num_warps
    if max(max(p.kp, p.np_) for p in layers) > ONE_PASS_WIDTH:
        return False
    if sum(p.kp * p.np_ for p in layers) > ONE_PASS_ACC_REGS * threads:
        return False
    if not recompute:
        return True
    columns = sum(p.kp for p in layers)
    columns += sum(p.np_ for p, kind in zip(layers, grad_inputs(spec)) if kind == "z")
    return block_m * columns * ELEM_BYTES[spec.dtype] <= ONE_PASS_HELD_REGS * 4 * threads


def fused_fits(spec: MLPSpec) -> bool:
    """Whether the fused kernels are worth searching: a row's multiply-adds through every layer
    within FUSED_MAX_MACS."""
    return sum(layer.n * layer.k for layer in train_layers(spec)) <= FUSED_MAX_MACS


def reduction_split(m: int, n: int, k: int, block_m: int, block_n: int, block_k: int) -> int:
    """Elements of a k-long reduction one program of an [m, n] output sums under split_k: whole
    block_k steps, as few as bring the output's tiles times the ranges to TARGET_PROGRAMS (k
    itself where the tiles reach it alone). Ranges x m x n stays below 2 x TARGET_PROGRAMS x
    block_m x block_n elements."""
    tiles = -(-m // block_m) * -(-n // block_n)
    steps = -(-k // block_k)
    ranges = min(-(-TARGET_PROGRAMS // tiles), steps)
    return k if ranges <= 1 else -(-steps // ranges) * block_k


def split_k_cuts(spec: MLPSpec, m: int, cfg: TrainConfig) -> list[int]:
    """The lengths of the reductions cfg's split_k cuts at m rows: a layer's forward or its
    input's gradient, where the step launches them per layer (fused runs neither, one_pass no
    input gradient, and with recompute no forward either)."""
    if not cfg.split_k or cfg.fused or (cfg.one_pass and cfg.recompute):
        return []
    layers = train_layers(spec)
    forward = ((layer.n, layer.k) for layer in layers)
    dgrad = ((layer.k, layer.n) for layer in layers if not cfg.one_pass)
    tiles = (cfg.block_m, cfg.block_n, cfg.block_k)
    return [k for n, k in (*forward, *dgrad) if reduction_split(m, n, k, *tiles) < k]


def split_k_fits(spec: MLPSpec, m: int, cfg: TrainConfig) -> bool:
    """Whether split_k is worth searching for cfg at m rows: it cuts a reduction of the step at
    least SPLIT_K_MIN long."""
    return any(k >= SPLIT_K_MIN for k in split_k_cuts(spec, m, cfg))


def weight_tiles(spec: MLPSpec, cfg: TrainConfig) -> int:
    """block_n x block_k tiles of the smallest weight: the programs its gradient has per split."""
    return min(
        -(-layer.n // cfg.block_n) * -(-layer.k // cfg.block_k) for layer in train_layers(spec)
    )


def default_for(spec: MLPSpec, m: int) -> TrainConfig:
    """The config without search: tiles no wider than the spec's widest layer needs, rows per
    tile growing with M (128 x 128 tiles for wide layers at large M), and the weight gradient
    split over rows until it fills the GPU (each split at least MIN_SPLIT_ROWS rows, its fp32
    partials within MAX_WORKSPACE). Narrow MLPs fuse their layers: a row block's work through
    all of them is small, so launches dominate; wide ones run a tiled launch per layer, which
    keeps every SM busy (a program per row block would serialise whole layers)."""
    widest = max(spec.widths)
    width = max(MIN_DOT, next_pow2(widest))
    if widest >= 512 and m >= 4096:
        wide_k = 64 if spec.dtype != "fp32" else 32
        cfg = TrainConfig(block_m=128, block_n=128, block_k=wide_k, num_warps=8, num_stages=3)
    elif widest <= FUSED_WIDTH:
        cfg = TrainConfig(
            block_m=16 if m <= 16 else 32 if m <= 64 else 64,
            block_n=min(64, width),
            block_k=min(32, width),
            num_warps=4,
            num_stages=2,
            fused=True,
        )
    else:
        # each program streams its columns' weights over the whole reduction: 64-deep steps
        # (fp32: 32) halve its loop, and layers of WIDE_LAYER or more take 128 columns a program
        wide = widest >= WIDE_LAYER
        cfg = TrainConfig(
            block_m=16 if m <= 16 else 32 if m <= 64 else 64,
            block_n=min(128 if wide else 64, width),
            block_k=min(64 if spec.dtype != "fp32" else 32, width),
            num_warps=4,
            num_stages=3 if wide else 2,
        )
    params = sum(layer.n * (layer.k + 1) for layer in train_layers(spec))
    want = -(-TARGET_PROGRAMS // weight_tiles(spec, cfg))
    split = max(1, min(want, m // MIN_SPLIT_ROWS, MAX_WORKSPACE // (4 * params)))
    return TrainConfig(**{**cfg.to_dict(), "split": 1 << (split.bit_length() - 1)})


def one_pass_for(spec: MLPSpec, m: int) -> list[TrainConfig]:
    """default_for's config with the one_pass backward, as saved and with recompute, where the
    spec fits them: the fewest warps that hold it, a program per SM (at most; each at least
    MIN_SPLIT_ROWS rows)."""
    programs = max(1, min(TARGET_PROGRAMS, m // MIN_SPLIT_ROWS))
    base = {**default_for(spec, m).to_dict(), "split": 1 << (programs.bit_length() - 1)}
    out, bm = [], base["block_m"]
    for recompute in (False, True):
        fits = (w for w in DOMAIN["num_warps"] if one_pass_fits(spec, w, bm, recompute))
        warps = next(fits, None)
        if warps is not None:
            choice = {"num_warps": warps, "one_pass": True, "recompute": recompute}
            out.append(TrainConfig(**{**base, **choice}))
    return out


def render_training(spec: MLPSpec) -> str:
    """Source of the spec's training kernels (names in kernel_names): every TrainConfig runs on
    it, its block sizes passed as tl.constexpr arguments. mlpgen.runtime.train loads it for a
    generated module."""
    from mlpgen.render import MACROS, TL_DTYPES, environment

    offsets, params = one_pass_layers(spec)
    passes = offsets if one_pass_fits(spec, max(DOMAIN["num_warps"])) else ()
    return (
        environment()
        .get_template("training.j2")
        .render(
            spec=spec,
            tl_dtype=TL_DTYPES[spec.dtype],
            macros=MACROS,
            layers=fused_layers(spec),
            act_saves=ACTIVATIONS[spec.act].saved,
            out_saves=ACTIVATIONS[spec.out_act].saved,
            passes=passes,
            offsets=offsets,
            params=params,
        )
    )


def kernel_names(spec: MLPSpec) -> list[str]:
    """The @triton.jit kernels render_training(spec) defines. Both families launch the weight
    gradient (train_wgrad_fused where every layer needs its gradient, else train_wgrad a layer)
    and train_reduce; a launch per layer adds train_forward, train_dgrad (under split_k their
    _partial and _sum kernels) and, with an out_act, train_dout; fused adds train_forward_fused
    and train_backward_fused; one_pass (where a spec fits it with some num_warps)
    train_backward_one_pass."""
    names = ["train_wgrad", "train_wgrad_fused", "train_reduce", "train_forward", "train_dgrad"]
    names += [f"train_{k}_{part}" for k in ("forward", "dgrad") for part in ("partial", "sum")]
    names += ["train_dout"] * (spec.out_act != "none")
    one_pass = ["train_backward_one_pass", "train_backward_one_pass_recompute"]
    names += one_pass * one_pass_fits(spec, max(DOMAIN["num_warps"]))
    return names + ["train_forward_fused", "train_backward_fused"]
