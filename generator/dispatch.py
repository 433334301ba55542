"""The rules a generated module shares with the generator, defined once: the GPU key of TUNED,
the log-nearest bucket and the cell a call runs. render_module copies these functions' source
into every module (RENDERED); tests check that the module's copies equal these.

A TUNED cell is a flat dict of a KernelConfig's fields plus "kernel" (its @triton.jit name) and
its measured times; where the tuner found another config faster inside a CUDA graph (replays
have no host cost), the cell holds that config as a sub-cell of the same form under "graph".
"""

from __future__ import annotations

import math

GRAPH = "graph"  # the key of a cell's CUDA-graph sub-cell


def gpu_key_of(name: str, major: int, minor: int, sms: int) -> str:
    """The key of TUNED for a GPU: its name, compute capability and SM count."""
    return f"{name}|sm{major}{minor}|{sms}"


def nearest_bucket(buckets, m: int) -> int:
    """The tuned batch size nearest to m on a log scale (the smaller one on a tie)."""
    lm = math.log(max(m, 1))
    return min(buckets, key=lambda b: (abs(math.log(b) - lm), b))


def pick_cell(table: dict, m: int, graph: bool = False) -> dict:
    """The nearest bucket's cell of a GPU's table (graph=True: its CUDA-graph sub-cell, if any)."""
    cell = table[nearest_bucket(table, m)]
    return cell.get("graph", cell) if graph else cell


def launch_kind(cell: dict) -> str:
    """A cell's module-side launch: its strategy's, or stream_tma where stream's tiles use TMA."""
    return "stream_tma" if cell.get("tma") else cell["strategy"]


RENDERED = (gpu_key_of, nearest_bucket, pick_cell, launch_kind)
