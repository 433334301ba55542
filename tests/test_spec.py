import pytest

from mlpgen.spec import KernelConfig, MLPSpec, SpecError, parse_widths


def test_canonical_names():
    assert MLPSpec((256, 512, 256)).name == "mlp_256x512x256_gelu_fp16"
    spec = MLPSpec((3, 5, 2), act="relu", out_act="sigmoid", dtype="bf16", bias=False)
    assert spec.name == "mlp_3x5x2_relu_outsigmoid_bf16_nobias"
    assert spec.depth == 2


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"widths": (4,)}, "at least 2"),
        ({"widths": ()}, "at least 2"),
        ({"widths": (4, 0)}, "out of range"),
        ({"widths": (4, -3)}, "out of range"),
        ({"widths": (4, 8193)}, "out of range"),
        ({"widths": (4, 2.5)}, "not an integer"),
        ({"widths": (4, True)}, "not an integer"),
        ({"widths": [4, 4]}, "tuple"),
        ({"widths": (4, 4), "act": "swish"}, "unknown act"),
        ({"widths": (4, 4), "out_act": "softmax"}, "unknown out_act"),
        ({"widths": (4, 4), "dtype": "fp8"}, "unknown dtype"),
        ({"widths": (4, 4), "bias": "yes"}, "bias"),
    ],
)
def test_bad_specs_are_refused(kwargs, message):
    with pytest.raises(SpecError, match=message):
        MLPSpec(**kwargs)


@pytest.mark.parametrize("text", ["", "256", "256,,3", "a,b", "3.5,2", "256, x"])
def test_parse_widths_refuses_garbage(text):
    with pytest.raises(SpecError):
        MLPSpec(parse_widths(text))


def test_parse_widths():
    assert parse_widths("256, 512,256") == (256, 512, 256)


def test_spec_round_trips_through_dict():
    spec = MLPSpec((7, 9), act="tanh", out_act="relu", dtype="fp32", bias=False)
    assert MLPSpec.from_dict(spec.to_dict()) == spec


def test_kernel_config_validation_and_names():
    cfg = KernelConfig(block_m=32, chunk=64, num_warps=8, num_stages=2)
    assert cfg.kernel_name == "_k_rowblock_m32_c64"
    assert KernelConfig.from_dict(cfg.to_dict() | {"us": 3.0, "kernel": "x"}) == cfg
    for bad in ({"block_m": 48}, {"chunk": 8}, {"num_warps": 3}, {"strategy": "magic"}):
        with pytest.raises(SpecError):
            KernelConfig(**bad)


def test_persist_last_block_n():
    """persist's last layer may take narrower tiles: named in the kernel, kept in its cell, and
    left out of both where it is 0 or equal to block_n (the same kernel, one name)."""
    cfg = KernelConfig("persist", block_m=64, block_n=64, block_k=64, last_block_n=32)
    assert cfg.kernel_name == "_k_persist_m64_n64_last32_k64"
    assert cfg.to_dict()["last_block_n"] == 32
    assert KernelConfig.from_dict(cfg.to_dict()) == cfg
    plain = KernelConfig("persist", block_m=64, block_n=64, block_k=64)
    same = KernelConfig("persist", block_m=64, block_n=64, block_k=64, last_block_n=64)
    assert same == plain and same.kernel_name == "_k_persist_m64_n64_k64"
    assert "last_block_n" not in plain.to_dict()
    for bad in ({"last_block_n": 24}, {"last_block_n": 8}, {"strategy": "split"}):
        with pytest.raises(SpecError, match="last_block_n"):
            KernelConfig(**({"strategy": "persist", "last_block_n": 32} | bad))
