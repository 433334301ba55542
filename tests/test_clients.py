"""mlpgen.fuse on real clients: timm's ViT, torchvision.ops.MLP, transformers' CLIP vision model
and GPT-2 MLP (random weights, built from configs: nothing is downloaded), a hand-written MLP and
a residual block. The libraries are the `clients` extra, part of `.[test]`: these tests import
them inside the test, so that a GPU run (`pytest -m gpu`) without them still collects."""

import copy

import pytest
import torch
from torch import nn

import mlpgen
from mlpgen.emit import module_path
from mlpgen.selfcheck import load_module
from mlpgen.spec import MLPSpec
from mlpgen.verify import check


def torch_path(model: nn.Module, monkeypatch) -> None:
    """Run every fused block of `model` through its module's torch path on the CPU (the suite
    runs under Triton's interpreter, where a CPU call would run the kernel)."""
    for m in model.modules():
        if type(m).__name__ == "FusedMLP":
            monkeypatch.setitem(type(m).forward.__globals__, "_INTERPRET", False)


def no_torch_path(model: nn.Module, monkeypatch) -> None:
    """Make every fused block of `model` fail if it takes the torch path: its kernel runs."""

    def refuse(*args):
        raise AssertionError("the torch path ran, not the kernel")

    for m in model.modules():
        if type(m).__name__ == "FusedMLP":
            monkeypatch.setitem(type(m).forward.__globals__, "reference", refuse)


def test_vit_tiny_has_its_12_mlp_blocks_fused_and_unfused(tmp_path, monkeypatch):
    import timm
    from timm.layers import Mlp

    torch.manual_seed(0)
    model = timm.create_model("vit_tiny_patch16_224", pretrained=False).eval()
    reference = copy.deepcopy(model)
    originals = [block.mlp for block in model.blocks]
    assert len(originals) == 12 and all(type(m) is Mlp for m in originals)
    with pytest.warns(UserWarning, match="mlpgen --widths 192,768,192 --act gelu --dtype fp32"):
        report = mlpgen.fuse(model, out=tmp_path)

    spec = MLPSpec((192, 768, 192), act="gelu", dtype="fp32")
    assert [(r.path, r.spec) for r in report.replaced] == [
        (f"blocks.{i}.mlp", spec) for i in range(12)
    ]
    assert [r.original for r in report.replaced] == originals
    assert report.written == [module_path(tmp_path, spec)]
    # the attention blocks hold two Linear layers each and are no MLP; the blocks and the model
    # hold replaced MLPs and are not listed
    assert [left.path for left in report.left] == [f"blocks.{i}.attn" for i in range(12)]
    assert all(type(b.mlp).__name__ == "FusedMLP" for b in model.blocks)

    torch_path(model, monkeypatch)
    x = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        want = reference(x)
        torch.testing.assert_close(model(x), want, atol=1e-5, rtol=1e-5)
    assert mlpgen.unfuse(model) == [f"blocks.{i}.mlp" for i in range(12)]
    assert [block.mlp for block in model.blocks] == originals
    with torch.no_grad():
        torch.testing.assert_close(model(x), want, atol=1e-5, rtol=1e-5)

    # the generated module adopts a timm Mlp by itself too (its forward traced by mlpgen)
    adopted = load_module(report.written[0]).FusedMLP.from_module(originals[5])
    assert torch.equal(adopted.linears[0].weight, originals[5].fc1.weight)
    assert torch.equal(adopted.linears[1].bias, originals[5].fc2.bias)


@pytest.mark.interpret
def test_a_small_timm_vit_runs_the_fused_kernel_under_the_interpreter(tmp_path, monkeypatch):
    from timm.models.vision_transformer import VisionTransformer

    torch.manual_seed(0)
    # widths 15 -> 33 -> 15; 3 images of 4 patches and a class token: 15 rows per block
    model = VisionTransformer(
        img_size=16, patch_size=8, embed_dim=15, depth=2, num_heads=3, mlp_ratio=2.2, num_classes=7
    ).eval()
    reference = copy.deepcopy(model)
    with pytest.warns(UserWarning, match="mlpgen --widths 15,33,15 --act gelu --dtype fp32"):
        report = mlpgen.fuse(model, out=tmp_path)
    assert [r.path for r in report.replaced] == ["blocks.0.mlp", "blocks.1.mlp"]

    no_torch_path(model, monkeypatch)
    x = torch.randn(3, 3, 16, 16)
    with torch.no_grad():
        got, want = model.forward_features(x), reference.forward_features(x)
    verdict = check(got, want, "fp32")
    assert verdict.ok, verdict.reason


class HandMlp(nn.Module):
    """An MLP as people write it: fc1, act, fc2."""

    def __init__(self, k, h, n):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(k, h), nn.ReLU(), nn.Linear(h, n)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class ResidualMlp(HandMlp):
    """A residual block: x + mlp(x), no chain."""

    def forward(self, x):
        return x + super().forward(x)


def zoo():
    """A model of MLP blocks from several sources, two adoptable and two not."""
    from torchvision.ops import MLP
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2MLP

    return nn.Sequential(
        HandMlp(10, 23, 12),
        MLP(12, [37, 12], activation_layer=nn.SiLU, dropout=0.1),
        ResidualMlp(12, 24, 12),
        GPT2MLP(20, GPT2Config(n_embd=12, n_layer=1, n_head=2)),
    )


def test_hand_written_and_torchvision_mlps_are_fused_residual_and_gpt2_left(tmp_path, monkeypatch):
    torch.manual_seed(0)
    model = zoo().eval()
    reference = copy.deepcopy(model)
    originals = list(model)
    with pytest.warns(UserWarning, match="heuristic default") as caught:
        report = mlpgen.fuse(model, out=tmp_path)
    hand = MLPSpec((10, 23, 12), act="relu", dtype="fp32")
    vision = MLPSpec((12, 37, 12), act="silu", dtype="fp32")
    assert [(r.path, r.spec) for r in report.replaced] == [("0", hand), ("1", vision)]
    assert report.written == [module_path(tmp_path, hand), module_path(tmp_path, vision)]
    message = str(caught[0].message)
    assert "mlpgen --widths 10,23,12 --act relu" in message
    assert "mlpgen --widths 12,37,12 --act silu" in message
    assert [(left.path, left.reason) for left in report.left] == [
        ("2", "add(): a residual connection"),
        ("3", "c_fc (Conv1D) is not an nn.Linear: mlpgen adopts nn.Linear layers only"),
    ]
    assert [type(m).__name__ for m in model] == ["FusedMLP", "FusedMLP", "ResidualMlp", "GPT2MLP"]
    assert model[2] is originals[2] and model[3] is originals[3]

    torch_path(model, monkeypatch)
    x = torch.randn(2, 5, 10)
    with torch.no_grad():
        torch.testing.assert_close(model(x), reference(x), atol=1e-5, rtol=1e-5)
    assert mlpgen.unfuse(model) == ["0", "1"]
    assert list(model) == originals


def clip_vision(hidden_act: str) -> nn.Module:
    from transformers import CLIPVisionConfig, CLIPVisionModel

    config = CLIPVisionConfig(
        hidden_size=24,
        intermediate_size=37,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=16,
        patch_size=8,
        hidden_act=hidden_act,
    )
    return CLIPVisionModel(config).eval()


def clip_mlp_paths(model: nn.Module) -> list[str]:
    return [path for path, m in model.named_modules() if type(m).__name__ == "CLIPMLP"]


@pytest.mark.parametrize("hidden_act, act", [("gelu", "gelu"), ("gelu_pytorch_tanh", "gelu_tanh")])
def test_clip_vision_mlp_blocks_are_fused(tmp_path, monkeypatch, hidden_act, act):
    torch.manual_seed(0)
    model = clip_vision(hidden_act)
    reference = copy.deepcopy(model)
    paths = clip_mlp_paths(model)
    assert len(paths) == 2
    with pytest.warns(UserWarning, match=f"mlpgen --widths 24,37,24 --act {act} --dtype fp32"):
        report = mlpgen.fuse(model, out=tmp_path)
    spec = MLPSpec((24, 37, 24), act=act, dtype="fp32")
    assert [(r.path, r.spec) for r in report.replaced] == [(p, spec) for p in paths]
    assert all(type(model.get_submodule(p)).__name__ == "FusedMLP" for p in paths)

    torch_path(model, monkeypatch)
    pixels = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        got = model(pixel_values=pixels).last_hidden_state
        want = reference(pixel_values=pixels).last_hidden_state
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
    assert mlpgen.unfuse(model) == paths
    assert clip_mlp_paths(model) == paths


def test_clip_quick_gelu_blocks_are_left_with_the_activation_named(tmp_path):
    model = clip_vision("quick_gelu")  # CLIP's default: x * sigmoid(1.702 x), not mlpgen's
    before = copy.deepcopy(model.state_dict())
    out = tmp_path / "out"
    report = mlpgen.fuse(model, out=out)
    assert report.replaced == [] and report.written == [] and not out.exists()
    reason = "activation_fn (QuickGELUActivation) is neither a Linear nor an activation mlpgen has"
    left = {left.path: left.reason for left in report.left}
    assert [left[p] for p in clip_mlp_paths(model)] == [reason, reason]
    assert len(clip_mlp_paths(model)) == 2  # nothing replaced
    after = model.state_dict()
    assert all(torch.equal(after[k], v) for k, v in before.items())
