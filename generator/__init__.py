"""mlpgen: generate, autotune and ship fused Triton kernels for MLPs."""

__version__ = "0.1.0"
