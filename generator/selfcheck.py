"""Run a generated module's kernel once and compare it with the fp32 reference.

`python -m mlpgen.selfcheck PATH [M]` prints one JSON line. The CLI runs it in a subprocess with
TRITON_INTERPRET=1 on machines without a GPU: the interpreter must be chosen before triton is
imported, and the CLI process may already have imported it.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import torch

from mlpgen.emit import read_module
from mlpgen.verify import TOLERANCE, random_problem, reference, rel_error


def load_module(path: Path):
    path = Path(path)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check(path: Path, m: int = 37, device: str = "cpu") -> dict:
    spec, _, _ = read_module(path)
    mod = load_module(path)
    x, weights, biases = random_problem(spec, m, device=device)
    y = mod.mlp(x, weights, biases)
    err = rel_error(y, reference(spec, x, weights, biases))
    return {
        "m": m,
        "rel_err": err,
        "tolerance": TOLERANCE[spec.dtype],
        "ok": err <= TOLERANCE[spec.dtype],
    }


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    m = int(argv[1]) if len(argv) > 1 else 37
    device = "cuda" if torch.cuda.is_available() else "cpu"
    result = check(Path(argv[0]), m, device)
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
