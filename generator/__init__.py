"""mlpgen: generate, autotune and ship fused Triton kernels for MLPs.

`mlpgen.fuse(model)`, `mlpgen.unfuse(model)` and `mlpgen.scan(model)` adopt a model's MLP blocks
(mlpgen.adopt); they are imported on first use, so `import mlpgen` stays light."""

__version__ = "0.1.0"

_ADOPT = ("fuse", "unfuse", "scan")


def __getattr__(name: str):
    if name in _ADOPT:
        from mlpgen import adopt

        return getattr(adopt, name)
    raise AttributeError(f"module 'mlpgen' has no attribute {name!r}")
