"""Adopting a model's MLP blocks: chains found by tracing (mlpgen.adopt.chain_of), fuse/unfuse on
a small transformer, the refusals, and `mlpgen scan`."""

import copy
import hashlib
import re
import textwrap
import warnings
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from mlpgen import cli
from mlpgen.adopt import chain_of, fuse, scan, unfuse
from mlpgen.emit import module_path, write_module
from mlpgen.spec import MLPSpec, SpecError


class TimmMlp(nn.Module):
    """timm.layers.Mlp's structure (timm is not a dependency): fc1, act, drop1, norm, fc2, drop2."""

    def __init__(self, dim=16, hidden=32, out=None, act_layer=nn.GELU, drop=0.0):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = act_layer()
        self.drop1 = nn.Dropout(drop)
        self.norm = nn.Identity()
        self.fc2 = nn.Linear(hidden, out or dim)
        self.drop2 = nn.Dropout(drop)

    def forward(self, x):
        x = self.fc1(x)
        x = self.act(x)
        x = self.drop1(x)
        x = self.norm(x)
        x = self.fc2(x)
        x = self.drop2(x)
        return x


class HandMlp(nn.Module):
    """fc1/act/fc2 as people write it, the activation a module."""

    def __init__(self, k=20, h=33, n=7):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(k, h), nn.ReLU(inplace=True), nn.Linear(h, n)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class FunctionalMlp(nn.Module):
    """The activation a function call, with dropout as F.dropout(training=self.training)."""

    def __init__(self, approximate="tanh"):
        super().__init__()
        self.up, self.down, self.approximate = nn.Linear(12, 24), nn.Linear(24, 5), approximate

    def forward(self, x):
        h = F.gelu(self.up(x), approximate=self.approximate)
        return self.down(F.dropout(h, 0.1, training=self.training))


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 16)

    def forward(self, x):
        return x + self.fc2(F.relu(self.fc1(x)))


class NormBetween(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.norm, self.fc2 = nn.Linear(16, 32), nn.LayerNorm(32), nn.Linear(32, 16)

    def forward(self, x):
        return self.fc2(self.norm(F.gelu(self.fc1(x))))


class Gated(nn.Module):
    """A SwiGLU MLP: down(silu(gate(x)) * up(x))."""

    def __init__(self):
        super().__init__()
        self.gate, self.up, self.down = nn.Linear(16, 32), nn.Linear(16, 32), nn.Linear(32, 16)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class RawWeight(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.w = nn.Parameter(torch.randn(16, 32))

    def forward(self, x):
        return F.linear(F.relu(self.fc1(x)), self.w)


class MethodMlp(HandMlp):
    """The activation a tensor method: fc2(fc1(x).relu())."""

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())


class Branchy(HandMlp):
    """Control flow on the data: torch.fx cannot trace it."""

    def forward(self, x):
        h = self.fc1(x)
        return self.fc2(h.relu() if h.sum() > 0 else h.tanh())


class QuickGelu(nn.Module):
    """An activation class mlpgen does not have: x * sigmoid(1.702 x) (CLIP's quick_gelu)."""

    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


class Conv1D(nn.Module):
    """GPT-2's Conv1D: a Linear layer with its weight stored [in, out], not an nn.Linear."""

    def __init__(self, k, n):
        super().__init__()
        self.weight, self.bias = nn.Parameter(torch.randn(k, n)), nn.Parameter(torch.zeros(n))

    def forward(self, x):
        return torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)


class ConvMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc, self.c_proj = Conv1D(16, 32), Conv1D(32, 16)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


ADOPTED = {
    "hand_written": (HandMlp, "mlp_20x33x7_relu_fp32"),
    "timm_mlp": (TimmMlp, "mlp_16x32x16_gelu_fp32"),
    "tensor_method": (MethodMlp, "mlp_20x33x7_relu_fp32"),
    "timm_mlp_dropout_eval": (lambda: TimmMlp(drop=0.1).eval(), "mlp_16x32x16_gelu_fp32"),
    "timm_mlp_silu": (lambda: TimmMlp(8, 24, 3, nn.SiLU), "mlp_8x24x3_silu_fp32"),
    "functional_gelu_tanh": (lambda: FunctionalMlp().eval(), "mlp_12x24x5_gelu_tanh_fp32"),
    "functional_gelu": (lambda: FunctionalMlp("none").eval(), "mlp_12x24x5_gelu_fp32"),
    "nested_sequential_out_act": (
        lambda: nn.Sequential(
            nn.Sequential(nn.Linear(8, 16), nn.Tanh()), nn.Linear(16, 4), nn.Sigmoid()
        ).half(),
        "mlp_8x16x4_tanh_outsigmoid_fp16",
    ),
    "leaky_relu_inplace": (
        lambda: nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(inplace=True), nn.Linear(16, 4)),
        "mlp_8x16x4_leaky_relu_fp32",
    ),
}


@pytest.mark.parametrize("name", sorted(ADOPTED))
def test_chain_of_adopts_chains_of_any_class(name):
    make, want = ADOPTED[name]
    module = make()
    chain = chain_of(module)
    assert not isinstance(chain, str), chain
    assert chain.spec.name == want
    lins = [m for m in module.modules() if isinstance(m, nn.Linear)]
    assert chain.linears == lins  # the module's own layers, in the order they run
    x = torch.randn(5, chain.spec.widths[0], dtype=lins[0].weight.dtype)
    with torch.no_grad():  # the chain rebuilt as nn.Sequential computes what the module does
        torch.testing.assert_close(chain.sequential().eval()(x), module.eval()(x))


REFUSED = {
    "residual": (Residual, "add(): a residual connection"),
    "layernorm_between": (NormBetween, "norm (LayerNorm) is neither a Linear nor an activation"),
    "gated": (Gated, "up (Linear) does not take the previous layer's output"),
    "dropout_training": (lambda: TimmMlp(drop=0.1), "drop1 is a Dropout in training mode"),
    "functional_dropout_training": (FunctionalMlp, "dropout() is a dropout in training mode"),
    "consecutive_linears": (
        lambda: nn.Sequential(nn.Linear(8, 8), nn.Identity(), nn.Linear(8, 4)),
        "Linear(8->8) is followed by Linear(8->4) without an activation",
    ),
    "other_leaky_slope": (
        lambda: nn.Sequential(nn.Linear(8, 8), nn.LeakyReLU(0.2), nn.Linear(8, 4)),
        "LeakyReLU(negative_slope=0.2)",
    ),
    "mixed_activations": (
        lambda: nn.Sequential(
            nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 4)
        ),
        "different activations (gelu, relu)",
    ),
    "mixed_bias": (
        lambda: nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4, bias=False)),
        "some of its Linear layers have a bias",
    ),
    "activation_first": (lambda: nn.Sequential(nn.ReLU(), nn.Linear(8, 4)), "starts with relu"),
    "data_dependent": (Branchy, "its forward cannot be traced with torch.fx (TraceError"),
    "foreign_activation_class": (
        lambda: nn.Sequential(nn.Linear(8, 8), QuickGelu(), nn.Linear(8, 4)),
        "1 (QuickGelu) is neither a Linear nor an activation mlpgen has",
    ),
    "matrix_layer_not_linear": (ConvMlp, "c_fc (Conv1D) is not an nn.Linear"),
    "raw_weight": (RawWeight, "a direct read of w: a parameter or buffer used outside a Linear"),
    "float64": (
        lambda: nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4)).double(),
        "torch.float64; give dtype=",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_chain_of_refuses_naming_the_first_foreign_operation(name):
    make, fragment = REFUSED[name]
    reason = chain_of(make())
    assert isinstance(reason, str) and fragment in reason, reason


def test_a_given_dtype_adopts_other_weights():
    seq = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4)).double()
    assert chain_of(seq, dtype="fp32").spec == MLPSpec((8, 8, 4), act="relu", dtype="fp32")


class Block(nn.Module):
    """A pre-norm transformer block's MLP half: x + mlp(norm(x))."""

    def __init__(self, dim=16, hidden=32):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = TimmMlp(dim, hidden, drop=0.1)

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class Transformer(nn.Module):
    def __init__(self, depth=3):
        super().__init__()
        self.embed = nn.Linear(6, 16)
        self.blocks = nn.Sequential(*(Block() for _ in range(depth)))
        self.gate = Gated()
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.gate(self.blocks(self.embed(x))))


def kernels_off(fused: nn.Module, monkeypatch) -> None:
    """Run a generated module's torch path on the CPU (the tests run under the interpreter)."""
    monkeypatch.setitem(type(fused).forward.__globals__, "_INTERPRET", False)


def test_fuse_replaces_every_block_of_a_transformer_and_unfuse_restores_them(tmp_path, monkeypatch):
    torch.manual_seed(0)
    model = Transformer().eval()
    reference = copy.deepcopy(model)
    originals = [b.mlp for b in model.blocks]
    with pytest.warns(UserWarning, match="mlpgen --widths 16,32,16 --act gelu --dtype fp32"):
        report = fuse(model, out=tmp_path)
    spec = MLPSpec((16, 32, 16), act="gelu", dtype="fp32")
    assert [(r.path, r.spec) for r in report.replaced] == [
        (f"blocks.{i}.mlp", spec) for i in range(3)
    ]
    assert [r.original for r in report.replaced] == originals
    assert report.written == [module_path(tmp_path, spec)]
    assert [(left.path, left.reason) for left in report.left] == [
        ("gate", "up (Linear) does not take the previous layer's output (a branch or a gate)")
    ]
    fused = [b.mlp for b in model.blocks]
    assert all(
        type(f).__name__ == "FusedMLP" and f.extra_repr() == f"spec={spec.name}" for f in fused
    )
    assert not any(f.training for f in fused)
    kernels_off(fused[0], monkeypatch)
    x = torch.randn(2, 9, 6)
    with torch.no_grad():
        torch.testing.assert_close(model(x), reference(x), atol=1e-5, rtol=1e-5)

    with torch.no_grad():  # train the fused model a little: unfuse keeps what it learnt
        fused[1].linears[0].weight.add_(0.5)
        expected = model(x)
    assert unfuse(model) == [f"blocks.{i}.mlp" for i in range(3)]
    assert [b.mlp for b in model.blocks] == originals
    with torch.no_grad():
        torch.testing.assert_close(model(x), expected, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(
            originals[1].fc1.weight, reference.blocks[1].mlp.fc1.weight + 0.5
        )


def test_a_second_fuse_reuses_the_module_and_warns_nothing(tmp_path):
    with pytest.warns(UserWarning, match="heuristic default"):
        fuse(Transformer().eval(), out=tmp_path)
    path = module_path(tmp_path, MLPSpec((16, 32, 16), act="gelu", dtype="fp32"))
    before = path.read_bytes()
    model = Transformer().eval()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = fuse(model, out=tmp_path)
    assert report.written == [] and len(report.replaced) == 3
    assert path.read_bytes() == before
    assert fuse(model, out=tmp_path).replaced == []  # fused blocks are not adopted again


@pytest.mark.interpret
def test_a_fused_block_runs_its_kernel_under_the_interpreter(tmp_path, monkeypatch):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 8), HandMlp(8, 24, 5))
    reference = copy.deepcopy(model)
    with pytest.warns(UserWarning):
        fuse(model, out=tmp_path)

    def no_torch_path(*args):
        raise AssertionError("the torch path ran, not the kernel")

    monkeypatch.setitem(type(model[1]).forward.__globals__, "reference", no_torch_path)
    x = torch.randn(19, 10)
    with torch.no_grad():
        torch.testing.assert_close(model(x), reference(x), atol=1e-4, rtol=1e-4)


def test_a_model_with_nothing_to_fuse_gets_an_empty_report(tmp_path):
    model = nn.Sequential(nn.Linear(4, 4), nn.Conv1d(2, 2, 1), nn.ReLU())
    out = tmp_path / "out"
    report = fuse(model, out=out)
    assert report.replaced == [] and report.left == [] and report.written == []
    assert not out.exists()


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda out: fuse(5, out=out), TypeError, "mlpgen.fuse takes an nn.Module, got int"),
        (lambda out: scan("model"), TypeError, "mlpgen.scan takes an nn.Module, got str"),
        (lambda out: unfuse([]), TypeError, "mlpgen.unfuse takes an nn.Module, got list"),
        (lambda out: fuse(nn.Linear(4, 4), out=out, dtype="fp64"), ValueError, "dtype='fp64'"),
        (lambda out: scan(nn.Linear(4, 4), dtype=torch.float16), ValueError, "choose from fp16"),
    ],
)
def test_bad_arguments_raise_before_anything_is_written(tmp_path, call, error, message):
    out = tmp_path / "out"
    with pytest.raises(error, match=re.escape(message)):
        call(out)
    assert not out.exists()


class ConvStack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([ConvMlp(), ConvMlp()])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_scan_lists_non_linear_matrix_layers_and_skips_containers():
    report = scan(ConvStack())
    assert report.replaced == []
    why = "c_fc (Conv1D) is not an nn.Linear: mlpgen adopts nn.Linear layers only"
    assert [(left.path, left.reason) for left in report.left] == [
        ("(the model)", f"layers.0.{why}"),
        ("layers.0", why),
        ("layers.1", why),
    ]  # the ModuleList `layers` has no forward of its own: no block


def test_a_model_that_is_itself_the_mlp_is_left_with_the_way_to_adopt_it(tmp_path):
    report = scan(HandMlp())
    assert report.replaced == []
    assert report.left[0].path == "(the model)" and "FusedMLP.from_module" in report.left[0].reason


def digest(folder: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("other_spec", "holds mlp_16x8x16_gelu_fp32, not mlp_16x32x16_gelu_fp32"),
        ("damaged", "damaged module"),
        ("foreign", "not an mlpgen module"),
    ],
)
def test_a_damaged_or_foreign_module_in_out_is_refused_and_nothing_written(
    tmp_path, content, fragment
):
    spec = MLPSpec((16, 32, 16), act="gelu", dtype="fp32")
    path = module_path(tmp_path, spec)
    other = write_module(tmp_path / "other.py", MLPSpec((16, 8, 16), dtype="fp32")).read_text()
    (tmp_path / "other.py").unlink()
    path.write_text(
        {
            "other_spec": other,
            "damaged": other + "\nTUNED = 5\n",
            "foreign": "print('mine')\n",
        }[content]
    )
    before = digest(tmp_path)
    model = Transformer().eval()
    mlps = [b.mlp for b in model.blocks]
    with pytest.raises(SpecError, match=fragment) as refused:
        fuse(model, out=tmp_path)
    assert "\n" not in str(refused.value)  # one line
    assert digest(tmp_path) == before
    assert [b.mlp for b in model.blocks] == mlps


MODELS = """
    from torch import nn

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.act, self.fc2 = nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    def make():
        return nn.Sequential(Mlp(), nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 4)))
"""


def test_scan_prints_the_specs_with_their_tune_commands_and_what_is_left(tmp_path, capsys):
    (tmp_path / "models.py").write_text(textwrap.dedent(MODELS))
    before = digest(tmp_path)
    out = tmp_path / "out"
    assert cli.main(["scan", f"{tmp_path / 'models.py'}:make", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "mlp_8x16x4_gelu_fp32 (to generate): 1 block(s): 0\n" in text
    assert f"tune: mlpgen --widths 8,16,4 --act gelu --dtype fp32 --out {out}\n" in text
    assert "left 1: Linear(4->8) is followed by Linear(8->4) without an activation" in text
    assert digest(tmp_path) == before  # no module, no bytecode cache


def test_the_report_lists_blocks_left_for_one_reason_on_one_line():
    from mlpgen.adopt import Left, Report, report_text

    left = [Left("a.attn", "3 inputs"), Left("b", "no activation"), Left("c.attn", "3 inputs")]
    lines = report_text(Report(left=left)).splitlines()
    assert lines == [
        "no MLP block to fuse",
        "left a.attn, c.attn: 3 inputs",
        "left b: no activation",
    ]


def test_scan_says_which_modules_out_holds_already(tmp_path, capsys):
    (tmp_path / "models.py").write_text(textwrap.dedent(MODELS))
    write_module(
        module_path(tmp_path, MLPSpec((8, 16, 4), dtype="bf16")), MLPSpec((8, 16, 4), dtype="bf16")
    )
    args = ["scan", f"{tmp_path / 'models.py'}:make", "--out", str(tmp_path), "--dtype", "bf16"]
    assert cli.main(args) == 0
    assert f"mlp_8x16x4_gelu_bf16 (module in {tmp_path})" in capsys.readouterr().out


@pytest.mark.gpu
def test_fuse_tunes_the_generated_module_on_a_gpu(tmp_path):
    from mlpgen.emit import read_module
    from mlpgen.tune import TuneOptions, gpu_key

    torch.manual_seed(0)
    model = Transformer().eval().cuda().half()
    reference = copy.deepcopy(model)
    storage = f"sqlite:///{tmp_path / 'studies.db'}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = fuse(model, out=tmp_path, tune=TuneOptions((18,), trials=3, storage=storage))
    assert not any("heuristic default" in str(w.message) for w in caught)  # it was tuned
    spec = MLPSpec((16, 32, 16), act="gelu", dtype="fp16")
    assert report.written == [module_path(tmp_path, spec)] and len(report.replaced) == 3
    assert sorted(read_module(report.written[0])[1][gpu_key(0)]) == [18]
    x = torch.randn(2, 9, 6, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        torch.testing.assert_close(model(x), reference(x), atol=2e-2, rtol=2e-2)


def test_the_generated_from_module_adopts_any_traced_chain(load_generated):
    """FusedMLP.from_module of a module that is no nn.Sequential: timm's Mlp structure is
    traced and adopted with its weights (the same output), a residual block refused with the
    operation that breaks the chain, and what is no module at all refused as such."""
    spec = MLPSpec((16, 32, 16), act="gelu", dtype="fp32")
    mod, _ = load_generated(spec)
    block = TimmMlp().eval()
    fused = mod.FusedMLP.from_module(block)
    x = torch.randn(9, 16)
    with torch.no_grad():
        torch.testing.assert_close(fused(x), block(x), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="cannot adopt Residual: .*add"):
        mod.FusedMLP.from_module(Residual())
    with pytest.raises(TypeError, match="from_module takes an nn.Module, got str"):
        mod.FusedMLP.from_module("mlp")
