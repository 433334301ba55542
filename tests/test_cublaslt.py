"""The cuBLASLt training step (mlpgen.runtime.cublaslt, Training.lt_forward/lt_backward, the
train search's LtBackward candidate). On the CPU the GEMMs run through an emulation of
cuBLASLt's column-major contract (operand layouts, transposes, the epilogues the step asks for),
which checks that each row-major product is asked for with the right operands; on the GPU
(`gpu` marker) cuBLASLt itself, against fp32 eager gradients."""

import warnings

import pytest
import torch
import torch.nn.functional as F
from test_autograd import sequential
from test_training import check_grads, saved_bytes, train_step

from mlpgen.runtime import cublaslt, train
from mlpgen.spec import MLPSpec
from mlpgen.train_tune import build_choice, firsts, train_space
from mlpgen.training import LtBackward, TorchBackward, TrainConfig, train_choice

LT = LtBackward().to_dict()


def test_fits_the_activations_with_epilogues_and_aligned_rows():
    assert cublaslt.fits(MLPSpec((1024, 4096, 1024), act="gelu_tanh", dtype="bf16")) is None
    assert cublaslt.fits(MLPSpec((784, 1024, 1024, 16), act="relu", dtype="fp32")) is None
    assert "gelu" in cublaslt.fits(MLPSpec((256, 512, 256), act="gelu"))  # exact gelu: none
    assert "output" in cublaslt.fits(MLPSpec((64, 64), act="relu", out_act="sigmoid"))
    assert "16 bytes" in cublaslt.fits(MLPSpec((64, 64, 3), act="relu"))  # a 6-byte row


def test_the_choice_round_trips_through_a_cell():
    assert train_choice(LT) == LtBackward()
    assert train_choice({"backward": "torch"}) == TorchBackward()
    assert build_choice("cublaslt") == LtBackward() and build_choice("torch") == TorchBackward()
    cfg = TrainConfig(block_m=32)
    assert train_choice(cfg.to_dict()) == cfg


@pytest.mark.parametrize("cuda", [False, True])
def test_the_search_offers_cublaslt_on_a_gpu_where_it_fits(monkeypatch, cuda):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    fit = MLPSpec((64, 128, 64), act="relu", dtype="fp16")
    unfit = MLPSpec((64, 128, 64), act="gelu", dtype="fp16")
    space = train_space(fit, 1024)
    assert (LtBackward() in space) == cuda and (LtBackward() in firsts(fit, 1024, {})) == cuda
    assert ("cublaslt" in space.domains()) == cuda
    assert LtBackward() not in train_space(unfit, 1024)


# -- cuBLASLt's contract, emulated ------------------------------------------------------------


def column_major(t, rows, cols, ld):
    """The column-major [rows, cols] matrix of leading dimension ld stored in t (a view)."""
    return t.reshape(-1)[: ld * cols].view(cols, ld)[:, :rows].t()


def mask_bits(aux, rows, cols, ld):
    """The ReLU mask's bits as a [rows, cols] bool matrix: bit r of column c, LSB first."""
    shifts = torch.arange(8, dtype=torch.uint8)
    bits = (aux.reshape(cols, ld // 8, 1) >> shifts) & 1
    return bits.reshape(cols, ld)[:, :rows].t().bool()


def dgelu_tanh(z):
    with torch.enable_grad():  # inside a backward too
        z = z.float().requires_grad_()
        (g,) = torch.autograd.grad(F.gelu(z, approximate="tanh").sum(), z)
    return g


def emulated_gemm(d, a, b, trans, shapes, epilogue=1, bias=None, aux=None, ld_aux=0):
    """cuBLASLt's matmul as documented: D[m, n] = op(A) op(B) column-major, then the epilogue
    (the ones cublaslt asks for), in fp32, rounded once to D's dtype."""
    (ra, ca, la), (rb, cb, lb), (rd, cd, ldd) = shapes
    a_ = column_major(a, ra, ca, la).float()
    b_ = column_major(b, rb, cb, lb).float()
    a_ = a_.t() if trans[0] else a_
    b_ = b_.t() if trans[1] else b_
    acc = a_ @ b_
    assert acc.shape == (rd, cd) and a_.shape[1] == b_.shape[0]
    if epilogue & cublaslt.BIAS:
        acc = acc + bias.float()[:, None]
    if epilogue in cublaslt.FORWARD["relu"]:
        shifts = torch.arange(8, dtype=torch.uint8)
        bits = torch.zeros(cd, ld_aux, dtype=torch.uint8)
        bits[:, :rd] = (acc > 0).t().to(torch.uint8)
        aux.copy_((bits.view(cd, ld_aux // 8, 8) << shifts).sum(-1).to(torch.uint8).view_as(aux))
        acc = acc.clamp_min(0)
    if epilogue in cublaslt.FORWARD["gelu_tanh"]:
        column_major(aux, rd, cd, ld_aux).copy_(acc.to(aux.dtype))
        acc = F.gelu(acc, approximate="tanh")
    if epilogue == cublaslt.BACKWARD["relu"]:
        acc = acc * mask_bits(aux, rd, cd, ld_aux)
    if epilogue == cublaslt.BACKWARD["gelu_tanh"]:
        acc = acc * dgelu_tanh(column_major(aux, rd, cd, ld_aux))
    column_major(d, rd, cd, ldd).copy_(acc.to(d.dtype))


EMULATED = [
    MLPSpec((24, 40, 16), act="relu", dtype="fp16"),
    MLPSpec((16, 32, 24, 8), act="gelu_tanh", dtype="bf16"),
    MLPSpec((12, 20, 8), act="relu", dtype="fp32", bias=False),
]


@pytest.mark.parametrize("spec", EMULATED, ids=lambda s: s.name)
@pytest.mark.parametrize("frozen", [None, 0, -1], ids=["all", "first frozen", "last frozen"])
def test_the_step_asks_for_the_right_products(load_generated, monkeypatch, spec, frozen):
    """lt_forward and lt_backward through the emulated GEMMs give eager's output and gradients
    (a frozen layer: its part of the flat gradient unwritten, the rest still right)."""
    monkeypatch.setattr(cublaslt, "_gemm", emulated_gemm)
    mod, _ = load_generated(spec)
    training = train.training_of(mod)
    fused, x, dy, _ = train_step(mod, spec, 37)
    params = [p.detach() for p in fused.parameters()]
    weights, biases = mod._split(params)
    y, saved = training.forward(x, weights, biases, LT)
    torch.testing.assert_close(y.float(), mod.reference(x, weights, biases).float(), **TOL)
    per = 1 + spec.bias
    needs = [True] * (1 + len(params))
    if frozen is not None:
        layer = frozen % training.layers
        needs[1 + layer * per : 1 + (layer + 1) * per] = [False] * per
    dx, grads = training.backward(dy, x, saved, LT, tuple(needs))
    which = [i for i, need in enumerate(needs) if need]
    assert all((g is None) == (not need) for g, need in zip(grads, needs[1:]))
    check_grads(spec, [dx, *[g for g in grads if g is not None]], fused, x, dy, which)


TOL = {"rtol": 2e-2, "atol": 2e-2}


@pytest.mark.parametrize("act", ["gelu_tanh", "relu"])
def test_the_step_saves_what_eager_saves_and_relus_mask(load_generated, monkeypatch, act):
    """The forward keeps what eager keeps (gelu: Z and H; relu: H), relu's mask beside: a bit
    per hidden element."""
    monkeypatch.setattr(cublaslt, "_gemm", emulated_gemm)
    spec = MLPSpec((12, 40, 24, 8), act=act, dtype="fp32")
    mod, _ = load_generated(spec)
    seq = sequential(spec.widths, act)
    fused = mod.FusedMLP.from_module(seq)
    x = torch.randn(37, 12, requires_grad=True)
    params = list(fused.parameters())
    training = train.training_of(mod)
    ours = saved_bytes(lambda: train._Function.apply(training, LT, x, *params))
    eager = saved_bytes(lambda: seq(x))
    masks = sum(37 * cublaslt.aux_ld(act, n) // 8 for n in spec.widths[1:-1])
    assert 0 < ours <= eager + (masks if act == "relu" else 0)


def test_a_misaligned_input_takes_the_torch_path(load_generated, monkeypatch):
    """cuBLASLt needs 16-byte aligned tensors: a call whose x is a view at an odd offset trains
    by the torch path, an aligned one by cuBLASLt's step, both with eager's gradients."""
    monkeypatch.setattr(cublaslt, "_gemm", emulated_gemm)
    monkeypatch.setattr(cublaslt, "plan_step", lambda *args: None)
    spec = EMULATED[0]
    mod, _ = load_generated(spec)
    training = train.training_of(mod)
    monkeypatch.setattr(training, "config", lambda m, x: LT)
    ran = []
    real = training.lt_forward
    monkeypatch.setattr(training, "lt_forward", lambda *a: ran.append(1) or real(*a))
    fused, x, dy, _ = train_step(mod, spec, 37)
    buffer = torch.empty(x.numel() + 1, dtype=x.dtype)
    for offset, by_lt in ((1, False), (0, True)):
        xs = buffer[offset : offset + x.numel()].view_as(x).copy_(x).requires_grad_()
        fused.zero_grad()
        ran.clear()
        (fused(xs) * dy).sum().backward()
        assert bool(ran) == by_lt
        check_grads(spec, [xs.grad] + [p.grad for p in fused.parameters()], fused, x, dy)


@pytest.mark.parametrize("spec", EMULATED, ids=lambda s: s.name)
def test_plan_step_plans_every_gemm_the_step_runs(load_generated, monkeypatch, spec):
    """The GEMMs plan_step plans before the forward are exactly those the step's forward and
    backward then run, so no backward meets a GEMM cuBLASLt has no algorithm for."""
    planned, ran = set(), set()
    monkeypatch.setattr(cublaslt, "_workspace", lambda device: None)

    def plan(device, dtype, trans, shapes, epilogue, has_bias, ld_aux, ws):
        planned.add((dtype, trans, shapes, epilogue, has_bias, ld_aux))

    def run(d, a, b, trans, shapes, epilogue=cublaslt.DEFAULT, bias=None, aux=None, ld_aux=0):
        ran.add((d.dtype, trans, shapes, epilogue, bias is not None, ld_aux))
        emulated_gemm(d, a, b, trans, shapes, epilogue, bias, aux, ld_aux)

    monkeypatch.setattr(cublaslt, "_plan_for", plan)
    monkeypatch.setattr(cublaslt, "_gemm", run)
    mod, _ = load_generated(spec)
    monkeypatch.setattr(train.training_of(mod), "config", lambda m, x: LT)
    fused, x, dy, got = train_step(mod, spec, 37)
    assert ran and ran == planned
    check_grads(spec, got, fused, x, dy)


def test_a_step_cublaslt_cannot_plan_trains_by_torch_with_one_warning(load_generated, monkeypatch):
    """Where cuBLASLt has no algorithm for one of the step's GEMMs, calls at those rows train
    by the torch path (eager's gradients), with one warning, and no GEMM runs."""
    ran = []

    def refuse(*args):
        raise cublaslt.LtError("cuBLASLt has no algorithm for epilogue 136")

    monkeypatch.setattr(cublaslt, "plan_step", refuse)
    monkeypatch.setattr(cublaslt, "_gemm", lambda *a, **k: ran.append(a))
    spec = EMULATED[0]
    mod, _ = load_generated(spec)
    monkeypatch.setattr(train.training_of(mod), "config", lambda m, x: LT)
    fused = mod.FusedMLP.from_module(sequential(spec.widths, spec.act))
    x = torch.randn(37, spec.widths[0]).half()
    dy = (torch.randn(37, spec.widths[-1]) / 37**0.5).half()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            xf = x.clone().requires_grad_()
            fused.zero_grad()
            (fused(xf) * dy).sum().backward()
            check_grads(spec, [xf.grad] + [p.grad for p in fused.parameters()], fused, x, dy)
    assert not ran
    assert [str(w.message).count("no algorithm") for w in caught] == [1]
    assert "torch path" in str(caught[0].message)


def test_a_cublaslt_cell_trains_by_torch_off_the_gpu(load_generated):
    """A table's cublaslt step is a GPU's: the interpreter's call takes the torch path."""
    spec = EMULATED[0]
    mod, _ = load_generated(spec)
    for cell in mod.TUNED["default"].values():
        cell["train"] = LT
    mod._forget_dispatch()
    assert train.training_of(mod).config(37, torch.empty(0, dtype=torch.float16)) is None


# -- on the GPU --------------------------------------------------------------------------------

GPU_SPECS = [
    MLPSpec((64, 128, 64), act="relu", dtype="fp16"),
    MLPSpec((128, 256, 128), act="gelu_tanh", dtype="bf16"),
    MLPSpec((96, 128, 128, 16), act="relu", dtype="fp32", bias=False),
    MLPSpec((1024, 4096, 1024), act="gelu_tanh", dtype="bf16"),
]


@pytest.fixture
def lt_step(monkeypatch):
    """Every bucket of a module trains by cuBLASLt's step."""

    def serve(mod):
        monkeypatch.setattr(train.training_of(mod), "default", {1: LT})
        monkeypatch.setenv("MLPGEN_TRAIN_KERNELS", "1")

    return serve


@pytest.mark.gpu
@pytest.mark.parametrize("spec", GPU_SPECS, ids=lambda s: s.name)
@pytest.mark.parametrize("m", [1, 37, 1000, 70001])
def test_gpu_cublaslt_gradients_match_eager(load_generated, lt_step, monkeypatch, spec, m):
    mod, _ = load_generated(spec)
    lt_step(mod)
    ran = []
    real = cublaslt._gemm
    monkeypatch.setattr(cublaslt, "_gemm", lambda *a, **k: ran.append(a[5:6]) or real(*a, **k))
    fused, x, dy, got = train_step(mod, spec, m, "cuda")
    assert len(ran) == 3 * (len(spec.widths) - 1)  # forward, weight and input gradient a layer
    check_grads(spec, got, fused, x, dy)


@pytest.mark.gpu
def test_gpu_cublaslt_step_replays_in_a_cuda_graph(load_generated, lt_step):
    """A whole step (forward, backward) captured once and replayed on new inputs gives the
    gradients of an uncaptured step on them."""
    spec = GPU_SPECS[1]
    mod, _ = load_generated(spec)
    lt_step(mod)
    fused, x, dy, want = train_step(mod, spec, 1000, "cuda")
    params = list(fused.parameters())
    static_x = torch.zeros_like(x).requires_grad_()
    static_dy = torch.zeros_like(dy)

    def step():
        return torch.autograd.grad(fused(static_x), [static_x, *params], static_dy)

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        step()  # warm: plans and workspace made outside the capture
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = step()
    static_x.data.copy_(x)
    static_dy.copy_(dy)
    graph.replay()
    for g, w in zip(out, want):
        torch.testing.assert_close(g, w)


@pytest.mark.gpu
def test_gpu_compiled_cublaslt_bucket_takes_the_torch_ops(load_generated, lt_step, monkeypatch):
    """torch.compile(fullgraph=True) of a step at a cublaslt bucket: one graph, whose backward
    op computes eager's gradients by torch ops (cuBLASLt is not called through wrap_triton)."""
    import sys

    from torch._dynamo.testing import CompileCounterWithBackend

    spec = GPU_SPECS[1]
    mod, _ = load_generated(spec)
    lt_step(mod)
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    fused, x, dy, _ = train_step(mod, spec, 1000, "cuda")  # an eager step: by cuBLASLt
    monkeypatch.setattr(cublaslt, "_gemm", None)  # now any call of it fails
    fused.zero_grad()  # the compiled step's gradients alone
    torch._dynamo.reset()
    counter = CompileCounterWithBackend("inductor")
    step = torch.compile(lambda x, dy: (fused(x) * dy).sum(), backend=counter, fullgraph=True)
    xf = x.clone().requires_grad_()
    step(xf, dy).backward()
    assert counter.frame_count == 1
    check_grads(spec, [xf.grad] + [p.grad for p in fused.parameters()], fused, x, dy)
