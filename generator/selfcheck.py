"""Run a generated module's kernel once and check it against the fp32 reference (verify.check_run).

`python -m mlpgen.selfcheck PATH [M]` prints one JSON line. The CLI runs it in a subprocess with
TRITON_INTERPRET=1 on machines without a GPU: the interpreter must be chosen before triton is
imported, and the CLI process may already have imported it.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import asdict
from pathlib import Path

import torch

from mlpgen.emit import read_module
from mlpgen.verify import TOLERANCES, check_run


def load_module(path: Path):
    path = Path(path)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_module(path: Path, m: int = 37, device: str = "cpu", seed: int | None = None) -> dict:
    """The module's mlp() on a random problem, checked by verify.check_run: a JSON-ready dict."""
    spec, _, _ = read_module(path)
    mod = load_module(path)
    result = check_run(lambda x, w, b, out: mod.mlp(x, w, b), spec, m, device, seed)
    return {
        "m": m,
        "ok": result.ok,
        "err": result.err,  # the worst element's error over its tolerance
        "where": result.where,
        "reason": result.reason,
        "tolerance": asdict(TOLERANCES[spec.dtype]),  # |out - ref| <= atol + rtol * |ref|
    }


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    m = int(argv[1]) if len(argv) > 1 else 37
    device = "cuda" if torch.cuda.is_available() else "cpu"
    result = run_module(Path(argv[0]), m, device)
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
