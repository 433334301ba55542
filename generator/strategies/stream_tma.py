"""stream_tma: the stream kernel with every tile moved by the Tensor Memory Accelerator, on a
persistent grid whose programs walk the row blocks (templates/kernel_stream_tma.j2): large
batches, where the descriptors' setup is paid once per program."""

from __future__ import annotations

from mlpgen.layout import ELEM_BYTES, plan_stream
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies import stream
from mlpgen.strategies.base import UNBOUNDED, Strategy

TMA_ALIGN = 16  # bytes: TMA needs 16-byte aligned bases and row strides


def reason(spec: MLPSpec, config: KernelConfig, max_shared: int) -> str | None:
    b = ELEM_BYTES[spec.dtype]
    if spec.depth == 2 and any(w * b % TMA_ALIGN for w in spec.widths):
        return f"TMA needs rows of a multiple of {TMA_ALIGN} bytes"
    return stream.reason(spec, config, max_shared)


def seeds(spec: MLPSpec, m: int) -> list[KernelConfig]:
    # the H200's best TMA tile
    return [
        KernelConfig("stream_tma", block_m=128, block_n=64, chunk=64, num_warps=8, num_stages=2)
    ]


STRATEGY = Strategy(
    name="stream_tma",
    domain={
        # on the H200 128 x 64 tiles with 8 warps and 2 stages ran the headline's 262144 rows
        # in 351 us with chunk 64, 318 with 128 (stream's pointer loads: 366), 128 x 32 in 442,
        # 64 x 32 with 4 warps in 654
        "block_m": (128,),
        "block_n": (32, 64),
        "chunk": (64, 128),
        "num_warps": (8,),
        "num_stages": (2,),
    },
    rule=reason,
    kernel_name=stream.kernel_name,
    planner=plan_stream,
    seeds=seeds,
    # 128-row tiles and the descriptors' setup pay off at large batches only (on the H200 it
    # lost to persist at 4096 rows)
    rows=(4096, UNBOUNDED),
    rows_why="descriptor setup",
    chunk_padded=True,
)
