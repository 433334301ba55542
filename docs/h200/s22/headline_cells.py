"""What session 22's probes share: the shipped headline module's 1024-row cells, serving one,
and writing a probe's table.

Imported by loop_probe.py, tuner_probe.py and lane_probe.py (run from the repository root as
`python3 docs/h200/s22/<probe>.py OUT`, which puts this folder on the import path)."""

from pathlib import Path

import torch
import triton

from mlpgen.emit import GRAPH

MODULE = Path("tuned/mlp_256x512x256_gelu_fp16.py")
ROWS = 1024


def cells(mod) -> dict[str, dict]:
    """The shipped call cell at ROWS and its CUDA-graph cell as a call cell, by strategy."""
    cell = mod.TUNED[mod.gpu_key(torch.device("cuda"))][ROWS]
    call = {k: v for k, v in cell.items() if not k.startswith(GRAPH)}
    graph = {k[len(GRAPH) :]: v for k, v in cell.items() if k.startswith(GRAPH)}
    return {call["strategy"]: call, graph["strategy"]: graph}


def serve(mod, cell: dict) -> None:
    """Every later call of `mod` runs `cell` (as the tuner's measure.hot_path sets it)."""
    mod.TUNED = {"default": {1: cell}}
    mod._forget_dispatch()


def publish(out: Path, filename: str, lines: list[str], table: dict, rounds: int, note="") -> None:
    """The probe's table, its footer (the kernels, the rounds, GPU and versions) after it:
    printed and written to out/filename."""
    kernels = ", ".join(f"{n}: {c['kernel']}" for n, c in table.items())
    lines = lines + [
        f"µs per call at {ROWS} rows ({kernels}), medians of {rounds} rounds{note}; "
        f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}"
    ]
    text = "\n".join(lines)
    print(text)
    (out / filename).write_text(text + "\n")
