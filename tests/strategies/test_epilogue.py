"""epilogue (no Triton kernel): searched only where cuBLASLt's epilogue computes the
activation exactly and there is a hidden layer with a bias to fuse."""

from mlpgen.space import search_space
from mlpgen.spec import KernelConfig, MLPSpec


def test_only_where_cublaslt_computes_the_activation_exactly():
    for act, bias, widths, ok in [
        ("relu", True, (784, 1024, 1024, 10), True),
        ("gelu_tanh", True, (1024, 4096, 1024), True),
        ("gelu", True, (256, 512, 256), False),  # cuBLASLt's GELU is the tanh approximation
        ("relu", False, (64, 64, 3), False),  # no bias to fuse
        ("relu", True, (64, 3), False),  # no hidden layer
    ]:
        spec = MLPSpec(widths, act=act, bias=bias)
        for b in (1, 262144):
            s = search_space(spec, b)
            assert (KernelConfig(strategy="epilogue") in s) == ok, (spec.name, b)
            assert KernelConfig(strategy="torch") in s
        if not ok:
            assert s.dropped_counts()["no epilogue"] == 1
    assert not KernelConfig(strategy="epilogue").has_kernel
