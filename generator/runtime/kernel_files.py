"""Kernels that mlpgen renders for a generated module at run time (the training kernels, the
cluster kernels) live in files under $MLPGEN_CACHE (default ~/.cache/mlpgen): triton reads a
kernel's source from its file, so each rendered source is written once, named by its hash, and
imported from there."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile


def cache_dir(kind: str) -> str:
    """Where rendered kernels of `kind` live: $MLPGEN_CACHE/kind (default ~/.cache/mlpgen/kind)."""
    root = os.environ.get("MLPGEN_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "mlpgen"
    )
    return os.path.join(root, kind)


def file_source(title: str, helpers: list[str], kernels: str) -> str:
    """A kernels file: its docstring, imports, the @triton.jit helpers the kernels call (as a
    module defines them, with their swaps for older GPUs in _SWAPS), then the kernels."""
    imports = "import os\n\nimport triton\nimport triton.language as tl\n\n_SWAPS = []"
    head = f'"""{title}"""\n\n{imports}'
    return "\n\n\n".join([head, *helpers, kernels.strip("\n")]) + "\n"


def import_source(kind: str, stem: str, source: str):
    """`source` as an imported module named `stem` plus its hash, from its file under
    cache_dir(kind) (written atomically, once per source: a temp file in the same folder, then
    os.replace, so processes that write it at once each leave a whole file)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    name = f"{stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    folder = cache_dir(kind)
    path = os.path.join(folder, f"{name}.py")
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(source)
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
    found = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module  # triton and torch.compile find a kernel's module by name
    found.loader.exec_module(module)
    return module
