"""cuBLASLt GEMMs with fused epilogues, through ctypes: the GEMMs of the "cublaslt" training
step (mlpgen.runtime.train), whose activation and activation derivative ride in cuBLASLt's
epilogues instead of separate passes over the hidden activations.

Row-major tensors are cuBLAS's column-major matrices transposed, so each row-major product is
asked for with its operands swapped: Y[M, N] = X W^T is, column-major, Y^T[N, M] = W^T X^T.

  linear       Y = act(X W^T + b), the pre-activation (gelu) or the ReLU bit mask (relu) kept
               as the epilogue's aux output for the backward
  input_grad   dH = dZ W, times act'(aux) of the layer below where it has an activation
  weight_grad  dW = dZ^T H

The bias gradients are not asked of cuBLASLt: its BGRADB and DGELU_BGRAD epilogues run as
kernels of their own after the GEMM, and those were slower than torch's sums over the rows.

Every address must be 16-byte aligned and every row a multiple of 16 bytes (fits() says so for
a spec); cuBLASLt's GELU epilogue is the tanh approximation, so exact gelu has no epilogue here.
A GEMM's descriptors and algorithm are planned once per shape and epilogue (cuBLASLt's
heuristic) and reused; plan_step plans a whole step's before its forward runs. Each call sets
the bias and aux addresses that moved and runs on torch's current stream (so a CUDA graph
captures it) with a workspace made outside any capture.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass

import torch

from mlpgen.layout import ELEM_BYTES

# cublasLt.h's values (CUDA 11-13)
COMPUTE_32F = 68
DATA_TYPES = {torch.float16: 2, torch.bfloat16: 14, torch.float32: 0}
OP_N, OP_T = 0, 1
DESC_TRANSA, DESC_TRANSB, DESC_EPILOGUE, DESC_BIAS = 3, 4, 7, 8
DESC_AUX, DESC_AUX_LD = 11, 12
PREF_WORKSPACE, PREF_ALIGN_A = 1, 5  # PREF_ALIGN_A .. + 3: A, B, C, D
DEFAULT, BIAS = 1, 4
# per activation: the forward's epilogue that keeps its aux (without, with the bias) and the
# backward's epilogue that reads it
FORWARD = {"relu": (130, 134), "gelu_tanh": (160, 164)}  # RELU_AUX(_BIAS), GELU_AUX(_BIAS)
BACKWARD = {"relu": 136, "gelu_tanh": 192}  # DRELU, DGELU
ACTIVATIONS = tuple(FORWARD)
ALIGN = 16  # bytes: every address and row
WORKSPACE_BYTES = 32 << 20
LIBRARIES = ("libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", "libcublasLt.so")


class LtError(RuntimeError):
    """cuBLASLt is missing, refused a call, or has no algorithm for a GEMM."""


def fits(spec) -> str | None:
    """None where the cublaslt step can train `spec` (an MLPSpec), else why not."""
    if spec.act not in ACTIVATIONS:
        return f"cuBLASLt has no epilogue for {spec.act} (only {', '.join(ACTIVATIONS)})"
    if spec.out_act != "none":
        return "cuBLASLt has no epilogue for an output activation"
    if any(w * ELEM_BYTES[spec.dtype] % ALIGN for w in spec.widths):
        return f"cuBLASLt needs rows of a multiple of {ALIGN} bytes"
    return None


def aligned(tensors) -> bool:
    """Whether every tensor's address is ALIGN-byte aligned (a view into a larger tensor may
    not be; a call with one takes the torch path)."""
    return all(t.data_ptr() % ALIGN == 0 for t in tensors)


class _Heuristic(ctypes.Structure):
    _fields_ = [
        ("algo", ctypes.c_uint64 * 8),
        ("workspace", ctypes.c_size_t),
        ("state", ctypes.c_int),
        ("waves", ctypes.c_float),
        ("reserved", ctypes.c_int * 4),
    ]


_P, _I = ctypes.c_void_p, ctypes.c_int


def _load():
    """The cuBLASLt library torch loaded (or one found by name), its functions typed."""
    for mode in (os.RTLD_NOW | os.RTLD_NOLOAD, os.RTLD_NOW):
        for name in LIBRARIES:
            try:
                lib = ctypes.CDLL(name, mode=mode)
            except OSError:
                continue
            types = {
                "cublasLtCreate": [_P],
                "cublasLtMatmulDescCreate": [_P, _I, _I],
                "cublasLtMatmulDescSetAttribute": [_P, _I, _P, ctypes.c_size_t],
                "cublasLtMatrixLayoutCreate": [
                    _P, _I, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int64
                ],
                "cublasLtMatmulPreferenceCreate": [_P],
                "cublasLtMatmulPreferenceSetAttribute": [_P, _I, _P, ctypes.c_size_t],
                "cublasLtMatmulPreferenceDestroy": [_P],
                "cublasLtMatmulAlgoGetHeuristic": [
                    _P, _P, _P, _P, _P, _P, _P, _I, ctypes.POINTER(_Heuristic),
                    ctypes.POINTER(_I),
                ],
                "cublasLtMatmul": [_P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P,
                                   ctypes.c_size_t, _P],
            }  # fmt: skip
            for fn, args in types.items():
                getattr(lib, fn).argtypes = args
                getattr(lib, fn).restype = _I
            return lib
    raise LtError("cuBLASLt is not found")


_LIB: list = []  # [the library], once loaded
_HANDLES: dict[int, ctypes.c_void_p] = {}
_WORKSPACES: dict[int, torch.Tensor] = {}
_PLANS: dict[tuple, _Plan] = {}


def _lib():
    if not _LIB:
        _LIB.append(_load())
    return _LIB[0]


def _check(status: int, what: str) -> None:
    if status != 0:
        raise LtError(f"cuBLASLt {what} failed (status {status})")


def _handle(device: int) -> ctypes.c_void_p:
    if device not in _HANDLES:
        handle = ctypes.c_void_p()
        with torch.cuda.device(device):
            _check(_lib().cublasLtCreate(ctypes.byref(handle)), "create")
        _HANDLES[device] = handle
    return _HANDLES[device]


def _workspace(device: int) -> torch.Tensor | None:
    """The device's workspace, made on first use outside a CUDA-graph capture (None inside one:
    the GEMM then runs without)."""
    if device not in _WORKSPACES:
        if torch.cuda.is_current_stream_capturing():
            return None
        _WORKSPACES[device] = torch.empty(WORKSPACE_BYTES, dtype=torch.uint8, device=device)
    return _WORKSPACES[device]


def _set(fn, obj, attr: int, value) -> None:
    _check(fn(obj, attr, ctypes.byref(value), ctypes.sizeof(value)), f"attribute {attr}")


@dataclass
class _Plan:
    """One GEMM's descriptors and algorithm (column-major D[m, n] = op(A) op(B), k deep)."""

    desc: ctypes.c_void_p
    layouts: tuple  # A, B, D
    algo: _Heuristic
    workspace: int  # bytes the algorithm may use
    bias_at: int | None = None  # the bias and aux addresses the descriptor holds
    aux_at: int | None = None


def _plan(key: tuple, device: int, dtype, trans, shapes, epilogue, ld_aux, bias, aux, ws) -> _Plan:
    """A GEMM's plan: D[m, n] = op(A)[m, k] op(B)[k, n] with A, B, D of `shapes` ((rows, cols,
    ld) of each as stored, column-major). The heuristic reads the bias and aux addresses'
    alignment, which every call keeps (ALIGN)."""
    lib, kind = _lib(), DATA_TYPES[dtype]
    desc = ctypes.c_void_p()
    _check(lib.cublasLtMatmulDescCreate(ctypes.byref(desc), COMPUTE_32F, 0), "descriptor")
    set_desc = lib.cublasLtMatmulDescSetAttribute
    _set(set_desc, desc, DESC_TRANSA, ctypes.c_int(trans[0]))
    _set(set_desc, desc, DESC_TRANSB, ctypes.c_int(trans[1]))
    _set(set_desc, desc, DESC_EPILOGUE, ctypes.c_uint32(epilogue))
    if bias is not None:
        _set(set_desc, desc, DESC_BIAS, ctypes.c_void_p(bias))
    if aux is not None:
        _set(set_desc, desc, DESC_AUX, ctypes.c_void_p(aux))
        _set(set_desc, desc, DESC_AUX_LD, ctypes.c_int64(ld_aux))
    layouts = []
    for rows, cols, ld in shapes:
        layout = ctypes.c_void_p()
        status = lib.cublasLtMatrixLayoutCreate(ctypes.byref(layout), kind, rows, cols, ld)
        _check(status, "layout")
        layouts.append(layout)
    pref = ctypes.c_void_p()
    _check(lib.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)), "preference")
    try:
        set_pref = lib.cublasLtMatmulPreferenceSetAttribute
        _set(set_pref, pref, PREF_WORKSPACE, ctypes.c_uint64(ws))
        for attr in range(PREF_ALIGN_A, PREF_ALIGN_A + 4):
            _set(set_pref, pref, attr, ctypes.c_uint32(ALIGN))
        found, count = _Heuristic(), ctypes.c_int(0)
        a, b, d = layouts
        status = lib.cublasLtMatmulAlgoGetHeuristic(
            _handle(device), desc, a, b, d, d, pref, 1, ctypes.byref(found), ctypes.byref(count)
        )
    finally:
        lib.cublasLtMatmulPreferenceDestroy(pref)
    _check(status, "heuristic")
    if count.value < 1 or found.state != 0:
        raise LtError(f"cuBLASLt has no algorithm for epilogue {epilogue} ({key})")
    return _Plan(desc, tuple(layouts), found, ws, bias, aux)


def _plan_for(device, dtype, trans, shapes, epilogue, has_bias, ld_aux, ws) -> _Plan:
    """The plan of a GEMM (see _plan), made on first use. Its bias and aux addresses are set by
    each call; planning takes an aligned placeholder."""
    key = (device, dtype, trans, shapes, epilogue, has_bias, ld_aux, ws)
    plan = _PLANS.get(key)
    if plan is None:
        bias, aux = (ALIGN if has_bias else None), (ALIGN if ld_aux else None)
        plan = _PLANS[key] = _plan(key, device, dtype, trans, shapes, epilogue, ld_aux, bias,
                                   aux, ws)  # fmt: skip
    return plan


def _gemm(d, a, b, trans, shapes, epilogue=DEFAULT, bias=None, aux=None, ld_aux=0) -> None:
    """d = op(a) op(b) (+ epilogue) by cuBLASLt, column-major (see _plan), on the current
    stream of d's device."""
    if not aligned(t for t in (d, a, b, bias, aux) if t is not None):
        raise LtError(f"cuBLASLt here needs {ALIGN}-byte aligned tensors")
    device = d.get_device()
    workspace = _workspace(device)
    ws = 0 if workspace is None else WORKSPACE_BYTES
    plan = _plan_for(device, d.dtype, trans, shapes, epilogue, bias is not None, ld_aux, ws)
    lib = _lib()
    set_desc = lib.cublasLtMatmulDescSetAttribute
    # the descriptor keeps the addresses it was last given: a call sets only those that moved
    if bias is not None and (at := bias.data_ptr()) != plan.bias_at:
        _set(set_desc, plan.desc, DESC_BIAS, ctypes.c_void_p(at))
        plan.bias_at = at
    if aux is not None and (at := aux.data_ptr()) != plan.aux_at:
        _set(set_desc, plan.desc, DESC_AUX, ctypes.c_void_p(at))
        plan.aux_at = at
    one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
    la, lb, ld = plan.layouts
    status = lib.cublasLtMatmul(
        _handle(device), plan.desc, ctypes.byref(one), a.data_ptr(), la, b.data_ptr(), lb,
        ctypes.byref(zero), d.data_ptr(), ld, d.data_ptr(), ld, ctypes.byref(plan.algo.algo),
        None if workspace is None else workspace.data_ptr(), plan.workspace,
        torch.cuda.current_stream(device).cuda_stream,
    )  # fmt: skip
    _check(status, "matmul")


def aux_ld(act: str, n: int) -> int:
    """The leading dimension, in elements, of linear's aux for `act` and an [M, n] output: n
    pre-activations (gelu), or n mask bits rounded up to a multiple of 128 (relu)."""
    return -(-n // 128) * 128 if act == "relu" else n


def aux_for(act: str, m: int, n: int, like: torch.Tensor) -> torch.Tensor:
    """linear's aux buffer for `act` and an [m, n] output: the pre-activation in the output's
    dtype (gelu), or the ReLU mask, a bit per element (relu)."""
    if act == "relu":
        return like.new_empty((m, aux_ld(act, n) // 8), dtype=torch.uint8)
    return like.new_empty((m, n))


def _linear(m, k, n, act, has_bias) -> tuple:
    """linear's GEMM for [M, K] x [N, K]^T: (trans, shapes, epilogue, ld_aux)."""
    if act is None:
        epilogue = BIAS if has_bias else DEFAULT
    else:
        epilogue = FORWARD[act][has_bias]
    shapes = ((k, n, k), (k, m, k), (n, m, n))  # W^T as stored [k, n], X^T [k, m], Y^T [n, m]
    return (OP_T, OP_N), shapes, epilogue, 0 if act is None else aux_ld(act, n)


def _input_grad(m, n, k, act) -> tuple:
    """input_grad's GEMM for [M, N] x [N, K]: (trans, shapes, epilogue, ld_aux)."""
    epilogue = DEFAULT if act is None else BACKWARD[act]
    shapes = ((k, n, k), (n, m, n), (k, m, k))  # W^T [k, n], dZ^T [n, m], dH^T [k, m]
    return (OP_N, OP_N), shapes, epilogue, 0 if act is None else aux_ld(act, k)


def _weight_grad(m, n, k) -> tuple:
    """weight_grad's GEMM for [M, N]^T x [M, K]: (trans, shapes, epilogue, ld_aux)."""
    shapes = ((k, m, k), (n, m, n), (k, n, k))  # H^T [k, m], dZ^T [n, m] (op T), dW^T [k, n]
    return (OP_N, OP_T), shapes, DEFAULT, 0


def linear(y, x, w, bias=None, act=None, aux=None) -> None:
    """y[M, N] = act(x[M, K] w[N, K]^T + bias); act (a key of FORWARD) also writes aux_for's
    buffer."""
    (m, k), n = x.shape, w.shape[0]
    trans, shapes, epilogue, ld = _linear(m, k, n, act, bias is not None)
    _gemm(y, w, x, trans, shapes, epilogue, bias, aux, ld)


def input_grad(dh, dz, w, act=None, aux=None) -> None:
    """dh[M, K] = dz[M, N] w[N, K], times act'(aux) where act (a key of BACKWARD) is the
    activation whose aux linear kept for the layer below."""
    (m, n), k = dz.shape, w.shape[1]
    trans, shapes, epilogue, ld = _input_grad(m, n, k, act)
    _gemm(dh, w, dz, trans, shapes, epilogue, None, aux, ld)


def weight_grad(dw, dz, h) -> None:
    """dw[N, K] = dz[M, N]^T h[M, K]."""
    (m, n), k = dz.shape, h.shape[1]
    trans, shapes, epilogue, _ = _weight_grad(m, n, k)
    _gemm(dw, h, dz, trans, shapes, epilogue)


def plan_step(device: int, dtype, m: int, widths, act: str, bias: bool) -> None:
    """Plan every GEMM of the training step of an MLP of `widths` at m rows (each layer's
    linear, weight_grad and input_grad, as the step asks for them), so that a step whose forward
    ran cannot meet a GEMM without an algorithm in its backward. LtError where one has none."""
    ws = 0 if _workspace(device) is None else WORKSPACE_BYTES
    layers = len(widths) - 1
    for i, (k, n) in enumerate(zip(widths, widths[1:])):
        hidden = act if i < layers - 1 else None  # the last layer's output: no activation
        below = act if i > 0 else None  # dx: no activation below the input
        gemms = [(_linear(m, k, n, hidden, bias), bias), (_weight_grad(m, n, k), False)]
        gemms.append((_input_grad(m, n, k, below), False))
        for (trans, shapes, epilogue, ld), has_bias in gemms:
            _plan_for(device, dtype, trans, shapes, epilogue, has_bias, ld, ws)
