"""Training and torch.compile on the CPU: gradients (gradcheck in float64 through the torch path,
the fused forward under the interpreter against an eager nn.Sequential), which path a call
takes, and the torch.library op (opcheck, torch.compile(fullgraph=True) with aot_eager)."""

import sys
from functools import partial

import pytest
import torch
from conftest import assert_matches

from mlpgen.activations import ACTIVATIONS
from mlpgen.emit import entry
from mlpgen.runtime import train
from mlpgen.runtime.op import op_launch, size_hint
from mlpgen.runtime.train import training_of
from mlpgen.spec import KernelConfig, MLPSpec
from mlpgen.strategies import STRATEGIES
from mlpgen.verify import random_problem, reference


def sequential(widths, act, out_act="none", bias=True, dtype=torch.float32):
    acts = {name: a.module_src for name, a in ACTIVATIONS.items()}
    layers = []
    for i, (k, n) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(torch.nn.Linear(k, n, bias=bias, dtype=dtype))
        layers.append(eval(acts[act if i < len(widths) - 2 else out_act]))
    return torch.nn.Sequential(*layers)


def flat_params(module, dtype=None):
    return [p.detach().to(dtype or p.dtype).requires_grad_() for p in module.parameters()]


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_grads_match_autograd(name):
    act = ACTIVATIONS[name]
    z = torch.randn(64, dtype=torch.float64, requires_grad=True)
    g = torch.randn(64, dtype=torch.float64)
    (want,) = torch.autograd.grad(act.torch_fn(z), z, g)
    got = act.grad_fn(g, z.detach())
    torch.testing.assert_close(got, want)


GRADCHECK_SPECS = [
    MLPSpec((6, 9, 4), act="gelu", dtype="fp32"),
    MLPSpec((5, 7, 3, 2), act="tanh", out_act="sigmoid", dtype="fp16", bias=False),
    MLPSpec((4, 3), act="relu", out_act="silu", dtype="fp32"),
    MLPSpec((3, 8, 8, 2), act="leaky_relu", out_act="gelu_tanh", dtype="bf16"),
]


@pytest.mark.parametrize("spec", GRADCHECK_SPECS, ids=lambda s: s.name)
def test_gradcheck_float64_through_the_torch_path(load_generated, spec):
    """The op's registered backward where no training kernels run (recomputed hidden
    activations, aten backward ops: mlpgen.runtime.op.torch_gradients) in float64."""
    mod, _ = load_generated(spec)
    params = flat_params(mod.FusedMLP(dtype=torch.float64))
    x = torch.randn(5, spec.widths[0], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, *p: mod.OP(x, list(p)), (x, *params))


TRAIN_CASES = [
    # spec, input shape (leading batch dims), tolerance on the gradients; the kernels' GELU is
    # the tanh fit (4.1e-5 |x|), which reaches the next layer's weight gradient through a sum
    # over rows: 1e-4 failed about one run in ten
    (MLPSpec((12, 33, 7), act="gelu", dtype="fp32"), (3, 7), 1e-3),
    (MLPSpec((10, 20, 17, 3), act="silu", out_act="tanh", dtype="fp32", bias=False), (19,), 1e-4),
    (MLPSpec((16, 24, 8), act="relu", dtype="fp16"), (2, 2, 5), 2e-2),
]


@pytest.mark.interpret
@pytest.mark.parametrize("spec, lead, tol", TRAIN_CASES, ids=lambda c: getattr(c, "name", ""))
def test_training_grads_match_eager_sequential(load_generated, monkeypatch, spec, lead, tol):
    """The training kernels (under the interpreter: the training forward and the generated
    backward) give the gradients of the eager nn.Sequential for x, every weight and every bias,
    for inputs with leading batch dimensions."""
    mod, _ = load_generated(spec)
    forwards = []
    training = training_of(mod)
    real = training.train_forward
    monkeypatch.setattr(training, "train_forward", lambda *a: forwards.append(1) or real(*a))
    dtype = mod.DTYPE
    seq = sequential(spec.widths, spec.act, spec.out_act, spec.bias, dtype)
    fused = mod.FusedMLP.from_module(seq)
    x = torch.randn(*lead, spec.widths[0], dtype=dtype)
    dy = torch.randn(*lead, spec.widths[-1], dtype=dtype)
    xs, xf = x.clone().requires_grad_(), x.clone().requires_grad_()
    (seq(xs) * dy).sum().backward()
    yf = fused(xf)
    assert forwards and yf.grad_fn is not None
    (yf * dy).sum().backward()
    pairs = [(xf.grad, xs.grad)] + [
        (a.grad, b.grad) for a, b in zip(fused.parameters(), seq.parameters())
    ]
    for got, want in pairs:
        torch.testing.assert_close(got.float(), want.float(), atol=tol, rtol=tol)


def test_paths_inference_training_and_frozen(load_generated, monkeypatch):
    """No grad needed: straight to _forward; grad needed by x or by a parameter: the Function."""
    mod, _ = load_generated(MLPSpec((8, 16, 4), dtype="fp32"))
    fused = mod.FusedMLP()
    applied = []
    real = train._Function.apply
    monkeypatch.setattr(train._Function, "apply", lambda *a: applied.append(1) or real(*a))
    x = torch.randn(3, 8)
    with torch.no_grad():
        assert fused(x).grad_fn is None
    with torch.inference_mode():
        assert fused(x).grad_fn is None
    assert applied == []
    fused(x).sum().backward()  # parameters require grad, x does not
    assert len(applied) == 1 and fused.linears[1].bias.grad is not None
    fused.zero_grad(set_to_none=True)
    fused.requires_grad_(False)
    assert fused(x).grad_fn is None and len(applied) == 1
    xr = x.clone().requires_grad_()
    fused(xr).sum().backward()
    assert len(applied) == 2 and xr.grad is not None and fused.linears[0].weight.grad is None


def test_empty_batch_is_differentiable(load_generated):
    mod, _ = load_generated(MLPSpec((8, 4), dtype="fp32"))
    fused = mod.FusedMLP()
    y = fused(torch.randn(0, 8))
    y.sum().backward()
    assert y.shape == (0, 4) and torch.equal(fused.linears[0].weight.grad, torch.zeros(4, 8))


def test_opcheck_on_the_cpu(load_generated):
    """Schema, fake tensor, registered autograd and AOT dispatch (static and dynamic shapes)."""
    mod, _ = load_generated(MLPSpec((6, 9, 4), act="silu", dtype="fp32"))
    params = flat_params(mod.FusedMLP())
    x = torch.randn(7, 6, requires_grad=True)
    torch.library.opcheck(mod.OP, (x, params))
    torch.library.opcheck(mod.OP, (x.detach(), [p.detach() for p in params]))


def test_op_is_registered_once_per_source(load_generated, tmp_path):
    spec = MLPSpec((6, 5), dtype="fp32")
    mod, path = load_generated(spec)
    assert mod.OP_NAME.startswith(f"mlpgen::{spec.name}_")
    from mlpgen.selfcheck import load_module

    again = load_module(path)  # importing the same file again: no error, the same op
    assert again.OP is mod.OP
    path.write_text(path.read_text() + "\n# changed\n")
    assert load_module(path).OP_NAME != mod.OP_NAME  # another source: another op


def test_compile_fullgraph_goes_through_the_op(load_generated, monkeypatch):
    """torch.compile(fullgraph=True) of a model holding a FusedMLP: one graph, the op inside,
    outputs and gradients equal to eager (aot_eager runs AOTAutograd, the op's fake and
    autograd; the op computes the torch path on the CPU, or the kernel under the interpreter,
    whose GELU is the tanh fit: within 1e-3, not fp32's default; its 4.2e-5 |x| / 2 goes
    through two Linears and the squared loss's gradient, and 1e-4 failed 1 run in ~10)."""
    from torch._dynamo.testing import CompileCounterWithBackend

    mod, _ = load_generated(MLPSpec((6, 9, 4), act="gelu", dtype="fp32"))
    monkeypatch.setitem(sys.modules, mod.__name__, mod)  # dynamo looks globals up by module
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(3, 6), mod.FusedMLP(), torch.nn.Tanh())
    counter = CompileCounterWithBackend("aot_eager")
    compiled = torch.compile(model, backend=counter, fullgraph=True)
    x = torch.randn(2, 11, 3)
    y = compiled(x)
    assert counter.frame_count == 1
    assert mod.OP_NAME.replace("::", ".") in counter.graphs[0].code
    close = partial(torch.testing.assert_close, atol=1e-3, rtol=1e-3)
    close(y, model(x))
    y.square().sum().backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).square().sum().backward()
    for g, p in zip(got, model.parameters()):
        close(g, p.grad)
    with torch.no_grad():
        close(compiled(x), model(x))


def test_size_hint_of_a_symbolic_batch():
    """Under dynamic shapes the op picks its config by the size the graph was traced with."""
    from torch.fx.experimental.proxy_tensor import make_fx

    seen = []
    make_fx(lambda x: seen.append(size_hint(x.shape[0])) or x * 2, tracing_mode="symbolic")(
        torch.randn(37, 3)
    )
    assert seen == [37] and size_hint(5) == 5


def test_autocast_casts_inputs_and_fp32_parameters(load_generated):
    """torch.autocast to the module's dtype: fp32 master weights and input are cast, gradients
    reach them in fp32; without autocast they are refused."""
    mod, _ = load_generated(MLPSpec((16, 24, 8), act="gelu", dtype="fp16"))
    seq = sequential((16, 24, 8), "gelu")
    fused = mod.FusedMLP.from_module(seq).float()
    x = torch.randn(5, 16, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.float16):
        y, want = fused(x), seq(x)
    assert y.dtype == want.dtype == torch.float16
    torch.testing.assert_close(y, want, atol=2e-3, rtol=2e-3)
    y.float().sum().backward()
    assert x.grad.dtype == fused.linears[0].weight.grad.dtype == torch.float32
    with pytest.raises(TypeError, match="torch.autocast"):
        fused(x)


OP_LAUNCH_CONFIGS = [KernelConfig(block_m=16, chunk=16)]
if "persist" in STRATEGIES:
    OP_LAUNCH_CONFIGS.append(KernelConfig(strategy="persist", block_m=16, block_n=16, block_k=16))
if "split" in STRATEGIES:
    OP_LAUNCH_CONFIGS.append(
        KernelConfig(strategy="split", block_m=16, chunk=16, block_n=16, block_k=16)
    )


@pytest.mark.interpret
@pytest.mark.parametrize("config", OP_LAUNCH_CONFIGS, ids=lambda c: c.strategy)
def test_op_launch_arguments_run_each_strategy(load_generated, config):
    """The op builds its own kernel arguments (buffers allocated in the op): they must be the
    ones each strategy's kernel takes. Run here through the interpreter, M not a multiple of
    block_m."""
    widths = (24, 40, 9) if config.strategy in ("stream", "split") else (24, 40, 20, 9)
    spec = MLPSpec(widths, act="silu", dtype="fp32")
    cell = entry(config)
    mod, _ = load_generated(spec, gpu_key="test|sm0|0", table={1: cell})
    x, weights, biases = random_problem(spec, 21)
    y = torch.full((21, 9), float("nan"))
    grid, args = op_launch(vars(mod), cell, x, y, mod._join(weights, biases), 21)
    function, tiles = mod.KERNELS[cell["kernel"]]
    function[grid](*args, *tiles, num_warps=4, num_stages=1)
    assert_matches(y, reference(spec, x, weights, biases), "fp32")
