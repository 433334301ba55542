"""The native training lane (mlpgen.runtime.train_lane, native_lane.cpp's train): a step the
Python lane recorded, every tensor argument named by its role, replays to the Python lane's own
outputs bit for bit (under the interpreter, here replayed by these tests as the C++ lane replays
it on a GPU); what the lane cannot stand in for is refused; the extension keeps training lanes
and declines calls that are not its. On the GPU (`gpu`), the C++ lane's steps against the
Python lane's."""

import copy

import pytest
import torch
from test_autograd import sequential
from test_native import fresh, needs_compiler  # noqa: F401 (a fixture)

from mlpgen.runtime import native, train, train_lane
from mlpgen.runtime.train_lane import (
    BUFFER,
    DX,
    FIXED,
    FLAT,
    GY,
    IN_BACKWARD,
    SAVED,
    SCRATCH,
    X,
    Y,
)
from mlpgen.spec import MLPSpec
from mlpgen.training import TrainConfig

TILES = dict(block_m=16, block_n=16, block_k=16, num_warps=4, num_stages=1)
CONFIGS = {
    "layered": TrainConfig(**TILES),
    "split_k": TrainConfig(**TILES, split_k=True),  # a forward workspace, a backward one
    "split_k-recompute": TrainConfig(**TILES, split_k=True, recompute=True),  # the backward's
    "fused-split": TrainConfig(**TILES, fused=True, split=2),
    "one_pass": TrainConfig(**TILES, one_pass=True, split=2),
    "recompute": TrainConfig(**TILES, fused=True, recompute=True),
    "one_pass-recompute": TrainConfig(**TILES, one_pass=True, recompute=True, split=2),
}
# gelu's act' reads Z (saved buffers), tanh's out_act' reads y (saves_y); odd widths, M = 37
SPEC = MLPSpec((10, 19, 13, 6), act="gelu", out_act="tanh", dtype="fp32")


def recorded_step(mod, cfg, need_x, m=37):
    """(recording, x, params, gy, y, dx, flat) of one Python-lane step with cfg, recorded."""
    training = train.training_of(mod)
    torch.manual_seed(1)
    fused = mod.FusedMLP.from_module(sequential(SPEC.widths, "gelu", "tanh"))
    params = list(fused.parameters())
    weights, biases = training.ns["_split"](params)
    x = torch.randn(m, SPEC.widths[0])
    gy = torch.randn(m, SPEC.widths[-1])
    rec = train_lane.Recording((0, m, need_x), cfg, by_inference=bool(cfg.get("recompute")))
    with torch.no_grad():
        y, saved = training.forward(x, weights, biases, cfg, rec)
        rec.note(x=x, y=y, params=params, saved=saved)
        needs = (need_x,) + (True,) * len(params)
        dx, flat = training.flat_backward(gy, x, saved, cfg, needs, rec)
    rec.note(gy=gy, dx=dx, flat=flat)
    return rec, x, params, gy, y, dx, flat


def replay(mod, prog, cfg, x, params, gy):
    """(y, dx, flat) of a program run on these tensors as native_lane.cpp runs it: y and the
    forward's buffers allocated, the forward's launches (or the module's inference forward),
    its scratch buffers then dropped (NaN), then dx, the flat gradient and the backward's
    buffers, the backward's launches."""
    training = train.training_of(mod)
    m = x.shape[0]
    y = torch.full((m, SPEC.widths[-1]), float("nan"))
    roles = {X: x, Y: y, GY: gy, FLAT: torch.full((training.params,), float("nan"))}
    roles.update(enumerate(params))
    roles[DX] = torch.full_like(x, float("nan"))
    launch = training.launcher(x, cfg)

    def run(launches, kinds):
        for j, (nbytes, kind, dtype) in enumerate(prog.buffers):
            if kind in kinds:
                size = (nbytes // dtype.itemsize,)
                roles[BUFFER - j] = torch.full(size, float("nan"), dtype=dtype)
        for kernel, grid, bound, caller in launches:
            launch(kernel, grid, [v if r == FIXED else roles[r] for r, v in bound], caller)

    with torch.no_grad():
        if prog.by_inference:
            y.copy_(mod.mlp(x, *training.ns["_split"](params)))
        run(prog.forward, (SAVED, SCRATCH))
        run([], (SCRATCH,))  # the forward's own buffers: dropped, their memory another's
        run(prog.backward, (IN_BACKWARD,))
    return y, roles[DX], roles[FLAT]


@pytest.mark.interpret
@pytest.mark.parametrize("need_x", [True, False], ids=["dx", "no-dx"])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_a_recorded_step_replays_to_the_python_lanes_outputs(load_generated, name, need_x):
    mod, _ = load_generated(SPEC)
    cfg = CONFIGS[name].to_dict()
    rec, x, params, gy, y, dx, flat = recorded_step(mod, cfg, need_x)
    prog = train_lane.program(rec)
    assert prog is not None and prog.by_inference == bool(cfg.get("recompute"))
    assert prog.saves_y == (not cfg.get("recompute"))  # tanh' reads y: saved unless recomputed
    assert (prog.forward == []) == prog.by_inference
    kinds = [b[1] for b in prog.buffers]
    assert kinds.count(SAVED) == (0 if prog.by_inference else 2 + 2)  # H0, H1, gelu's Z0, Z1
    # split_k's forward workspace (layer 1 sums 19 in two steps): the forward's own
    assert kinds.count(SCRATCH) == (bool(cfg.get("split_k")) and not prog.by_inference)
    roles = {r for _, _, bound, _ in prog.forward + prog.backward for r, _ in bound}
    assert (DX in roles) == need_x and {GY, FLAT} <= roles
    # fresh inputs of the same shapes: the program holds no address of the recorded step
    torch.manual_seed(2)
    x2, gy2 = torch.randn_like(x), torch.randn_like(gy)
    params2 = [torch.randn_like(p) for p in params]
    got = replay(mod, prog, cfg, x2, params2, gy2)
    training = train.training_of(mod)
    with torch.no_grad():
        w, b = training.ns["_split"](params2)
        y2, saved2 = training.forward(x2, w, b, cfg)
        dx2, flat2 = training.flat_backward(gy2, x2, saved2, cfg, (need_x,) + (True,) * 6)
    assert torch.equal(got[0], y2) and torch.equal(got[2], flat2)
    assert torch.equal(got[1], dx2) if need_x else dx2 is None


@pytest.mark.interpret
def test_refusals_and_a_buffer_at_a_reused_address(load_generated):
    mod, _ = load_generated(SPEC)
    cfg = CONFIGS["layered"].to_dict()
    rec, *_ = recorded_step(mod, cfg, True)
    assert train_lane.program(rec) is not None
    view = rec.tensors["saved"][-1]  # a saved tensor that is a view into another's storage
    rec.tensors["saved"][-1] = (view[0], False, *view[2:])
    assert train_lane.program(rec) is None
    rec, *_ = recorded_step(mod, cfg, True)
    rec.tensors["flat"] = rec.tensors["gy"]  # two roles at one address
    assert train_lane.program(rec) is None
    rec, *_ = recorded_step(mod, CONFIGS["recompute"].to_dict(), True)
    rec.forward.append(rec.backward[0])  # a recomputing step launches no forward kernel
    assert train_lane.program(rec) is None
    # a later backward tensor at the address of a freed one: one buffer, the larger size
    rec, *_ = recorded_step(mod, cfg, True)
    prog = train_lane.program(rec)
    j = next(j for j, b in enumerate(prog.buffers) if b[1] == IN_BACKWARD)  # the backward's
    at = next(
        (i, k) for i, (_, _, bound, _) in enumerate(prog.backward)
        for k, (role, _) in enumerate(bound) if role == BUFFER - j
    )  # fmt: skip
    kernel, grid, args, caller = rec.backward[at[0]]
    ptr, whole, nbytes, dtype = args[at[1]]
    grown = [(ptr, whole, nbytes + 4096, dtype) if a == args[at[1]] else a for a in args]
    rec.backward.append((kernel, grid, grown, caller))
    assert train_lane.program(rec).buffers[j][0] == nbytes + 4096
    # the forward's workspace is free by the backward: a backward tensor at its address (here
    # dL/dy, swapping addresses with whatever backward tensor had that memory) takes its own
    # role, the forward keeps its buffer
    rec, *_ = recorded_step(mod, CONFIGS["split_k"].to_dict(), True)
    ws, gy = named(rec.forward, "train_forward_partial")[2][2][0], rec.tensors["gy"][0]
    swap = {ws: gy, gy: ws}

    def moved(a):
        return (swap.get(a[0], a[0]), *a[1:]) if isinstance(a, tuple) else a

    for k in ("gy", "dx", "flat"):
        rec.tensors[k] = moved(rec.tensors[k])
    rec.backward = [(k, g, [moved(a) for a in args], c) for k, g, args, c in rec.backward]
    prog = train_lane.program(rec)
    workspace = named(prog.forward, "train_forward_partial")[2][2][0]
    assert workspace <= BUFFER and prog.buffers[BUFFER - workspace][1] == SCRATCH
    assert GY in {r for _, _, bound, _ in prog.backward for r, _ in bound}
    # recomputed in the backward, the forward's workspace is held to its end: a buffer of the
    # backward's; at a smaller named tensor's address (dx in its memory) it is refused
    rec, *_ = recorded_step(mod, CONFIGS["split_k-recompute"].to_dict(), True)
    workspace = named(train_lane.program(rec).backward, "train_forward_partial")[2][2][0]
    assert workspace <= BUFFER
    ws = named(rec.backward, "train_forward_partial")[2][2]
    rec.tensors["dx"] = (ws[0], *rec.tensors["dx"][1:])
    assert rec.tensors["dx"][2] < ws[2] and train_lane.program(rec) is None


def named(launches, kernel):
    """The launch of `kernel` in a recording's or a program's launches."""
    return next(r for r in launches if r[0][0].fn.__name__ == kernel)


@pytest.mark.interpret
def test_recording_needs_the_switch_a_gpu_and_every_parameter(load_generated, monkeypatch):
    mod, _ = load_generated(SPEC)
    training = train.training_of(mod)
    cfg = CONFIGS["layered"].to_dict()
    params = [torch.ones(1, requires_grad=True)]
    x = torch.randn(3, 10)
    monkeypatch.delenv("MLPGEN_NATIVE_TRAIN", raising=False)
    assert train_lane.enabled()  # on by default
    assert training.recording(x, cfg, params) is None  # a CPU tensor: no direct launch
    monkeypatch.setenv("MLPGEN_NATIVE_TRAIN", "0")
    assert not train_lane.enabled()


@needs_compiler
def test_the_extension_keeps_training_lanes_and_declines_other_calls(fresh):  # noqa: F811
    lane = native.build()
    numels, rows = [96, 12, 60, 5], [12, 0, 5, 0]
    state = lane.state(torch.empty(0), 8, 5, numels, rows, False)
    launch = (0, 3, 1, 4, 0, 1, False, False, [X, BUFFER, 0, -1], [0, 0, 0, 7])
    backward = (0, 2, 1, 4, 0, 1, False, False, [GY, DX, FLAT, BUFFER - 1, 2], [0] * 5)
    buffers = [(64, SAVED), (32, IN_BACKWARD)]
    lane.train_add(state, 0, 7, True, False, True, [launch], [backward], buffers)
    lane.train_add(state, 0, 7, False, True, False, [], [backward], buffers)
    lane.train_add(state, 0, 7, True, False, True, [launch, launch], [], [(64, SAVED)])  # replaces
    assert lane.train_lanes(state) == [(0, 7, True, 2, 0), (0, 7, False, 0, 1)]
    with pytest.raises(ValueError, match="names no argument"):  # buffer 1 of one
        lane.train_add(state, 0, 7, True, False, True, [], [backward], [(64, SAVED)])
    with pytest.raises(ValueError, match="names no argument"):  # a parameter past the last
        bad = (0, 2, 1, 4, 0, 1, False, False, [GY, 4], [0, 0])
        lane.train_add(state, 0, 7, True, False, True, [], [bad], [])
    with pytest.raises(ValueError, match="inference lane's"):  # by_inference with kernels
        lane.train_add(state, 0, 7, True, True, True, [launch], [], [(64, SAVED)])
    for bad in ((0, SAVED), (64, IN_BACKWARD + 1)):
        with pytest.raises(ValueError, match="at least one byte, of kind"):
            lane.train_add(state, 0, 7, True, False, True, [], [], [bad])
    with pytest.raises(ValueError, match="names no argument"):  # an inference lane names no GY
        lane.add(state, 0, 5, 0, 1, 1, 4, 0, 1, False, False, [GY], [0], [])
    x = torch.randn(7, 8, requires_grad=True)
    params = [torch.randn(n, requires_grad=True) for n in numels]
    assert lane.train(state, x, params) is None  # a CPU tensor: not the lane's call
    assert lane.train(state, "x", params) is None
    with pytest.raises(TypeError):
        lane.train(state, x)


GPU_CASES = [  # (spec, config, M): the shipped modules' cells at M = 1, split weight rows, split_k
    (
        MLPSpec((64, 64, 64, 64, 64, 3), act="relu", dtype="fp16"),
        TrainConfig(
            16, 32, 16, num_warps=8, num_stages=3, fused=True, recompute=True, one_pass=True
        ),
        1,
    ),
    (
        MLPSpec((256, 512, 256), act="gelu", dtype="fp16"),
        TrainConfig(16, 32, 32, num_warps=8, num_stages=1),
        37,
    ),
    (MLPSpec((64, 96, 33), act="gelu", out_act="tanh", dtype="bf16"), CONFIGS["fused-split"], 1000),
    # split_k: a forward workspace the lane drops once the forward is launched
    (
        MLPSpec((1024, 4096, 1024), act="gelu_tanh", dtype="bf16"),
        TrainConfig(16, 128, 64, num_warps=4, num_stages=3, split_k=True),
        1,
    ),
    # split_k with recompute: the backward's forward holds its workspace to the backward's end
    (
        MLPSpec((1024, 4096, 1024), act="gelu_tanh", dtype="bf16"),
        TrainConfig(16, 128, 64, num_warps=4, num_stages=3, split_k=True, recompute=True),
        16,
    ),
]


@pytest.mark.gpu
@pytest.mark.parametrize("need_x", [True, False], ids=["dx", "no-dx"])
@pytest.mark.parametrize("spec, cfg, m", GPU_CASES, ids=lambda v: getattr(v, "name", None))
def test_gpu_native_lane_steps_as_the_python_lane(
    load_generated, monkeypatch, spec, cfg, m, need_x
):
    """With the native lane on (the default) the first step (the Python lane's) is recorded, the
    next ones run in C++ (MlpgenTrainBackward) with the Python lane's y and gradients bit for
    bit (the kernels sum in a fixed order) and eager's within tolerance; autograd's rules hold:
    an in-place change of a saved tensor, a second backward through a freed graph and double
    backward are refused; a CUDA-graph capture of the step replays it."""
    from test_training import check_grads

    from mlpgen import runtime

    monkeypatch.setenv("MLPGEN_NATIVE_TRAIN", "1")
    monkeypatch.setenv("MLPGEN_TRAIN_KERNELS", "1")
    mod, _ = load_generated(spec)
    training = train.training_of(mod)
    monkeypatch.setattr(training, "default", {1: cfg.to_dict()})
    torch.manual_seed(0)
    dtype = getattr(torch, {"fp16": "float16", "bf16": "bfloat16"}[spec.dtype])
    fused = mod.FusedMLP.from_module(sequential(spec.widths, spec.act, spec.out_act).cuda())
    params = list(fused.parameters())
    x = torch.randn(m, spec.widths[0], device="cuda").to(dtype)
    dy = (torch.randn(m, spec.widths[-1], device="cuda") / m**0.5).to(dtype)

    def step(xs=None, net=fused):
        xs = x.clone().requires_grad_(need_x) if xs is None else xs
        y = net(xs)
        grads = torch.autograd.grad(
            (y * dy).sum(), ([xs] if need_x else []) + list(net.parameters())
        )
        return y, grads

    y1, g1 = step()
    assert (mod._RT is not None) == (runtime.unsupported() is None)
    if mod._RT is None:  # another triton: no direct launches, nothing to record
        assert training.native_state is None
        return
    assert training.native_state is not None
    lanes = native.build().train_lanes(training.native_state)
    assert (torch.cuda.current_device(), m, need_x) in [lane[:3] for lane in lanes]
    y2, g2 = step()
    assert y2.grad_fn.name() == "MlpgenTrainBackward"
    assert torch.equal(y1, y2) and all(torch.equal(a, b) for a, b in zip(g1, g2))
    if need_x:
        check_grads(spec, list(g2), fused, x, dy)
    # a CUDA-graph capture of the step: the lane declines it, the Python lane's launches are
    # captured (after warm-up steps on a side stream, which the lane takes). On a copy of the
    # parameters: a leaf's gradient node keeps the stream it was made on (the default stream,
    # alive while y1 and y2 hold their graphs), and a captured backward that waits on it fails.
    twin = copy.deepcopy(fused)
    static_x = x.clone().requires_grad_(need_x)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            step(static_x, twin)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        _, captured = step(static_x, twin)
    graph.replay()
    assert all(torch.equal(a, b) for a, b in zip(captured, g2))
    y = fused(x.clone().requires_grad_(need_x))
    with torch.no_grad():
        params[0].add_(0)  # a new version of a saved tensor
    with pytest.raises(RuntimeError, match="inplace operation"):
        y.float().sum().backward()
    loss = fused(x.clone().requires_grad_(need_x)).float().sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()
    y = fused(x.clone().requires_grad_(need_x))
    with pytest.raises(RuntimeError, match="double backward"):
        torch.autograd.grad(y.float().sum(), params, create_graph=True)
