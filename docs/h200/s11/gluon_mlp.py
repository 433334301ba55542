"""Session 11 probe: the headline's two layers (256 -> 512 -> 256, GELU, fp16) as one Gluon kernel
(triton 3.6's explicit-layout language) in the form of FlashAttention-3's forward, to see
whether what Triton's own `tl.dot` pipelining cannot express moves the large batches (stream_tma:
320 us at 262144 rows, 0.70x eager; 0.55x would be ~251 us; BENCHMARKS "Large batches"):

- warp specialisation: one loader warp (TMA into shared memory; two mbarrier rings of STAGES
  weight slices, the first layer's and the second's, so that a first-layer slice is freed as
  soon as its wgmma retires) and two consumer warpgroups, each owning 64 of a program's 128
  rows (240 registers a thread each, the loader 24);
- inside a consumer, slice j+1's first-layer wgmmas are issued before slice j's second-layer
  wgmma and waited with one group still in flight, so GELU(j+1) overlaps the wgmma of slice j;
- the hidden slice goes to the second layer through shared memory (two buffers a consumer);
- PINGPONG: the consumers take turns issuing wgmmas (FlashAttention-3's ping-pong);
- GLUON_MLP_XREG=1: the x block in registers as the first layer's A operand;
- GLUON_MLP_PART: the kernel cut back, for where its time goes (results wrong on purpose).

A persistent grid (one program per SM) walks 128-row blocks; both consumers read the same
weight slices, so each slice is fetched from L2 once per 128 rows, as stream_tma's tile does.
Measured on the H200 in run75-run80 (BENCHMARKS "Large batches in Gluon"): correct everywhere,
never faster than stream_tma; at 262144 rows its data movement alone takes 206 us, its math
alone 245, the whole 332-346.
"""

import os

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

# GLUON_MLP_PART (the parts probe, results wrong on purpose but 0): 1 no GELU (the hidden slice
# only rounded), 2 no second-layer wgmma, 3 no first-layer wgmma, 5 neither wgmma nor GELU,
# 6 the math alone (no TMA load, no wait for one: the wgmmas read whatever shared memory holds)
_PART = gl.constexpr(int(os.environ.get("GLUON_MLP_PART", "0")))
# GLUON_MLP_XREG=1: each consumer loads its x block into registers once per block and gives the
# first layer's wgmmas it as their A operand (half the shared-memory reads of those wgmmas)
_XREG = gl.constexpr(int(os.environ.get("GLUON_MLP_XREG", "0")))
KC = gl.constexpr(64)  # columns of one TMA box of x and W1 (128 bytes of fp16: the widest swizzle)


@gluon.jit
def _gelu_f16(x):
    """The shipped module's packed GELU (erf through a tanh fit, two fp16 per instruction)."""
    return gl.inline_asm_elementwise(
        "{ .reg .b32 z, q, p, h, c_rsqrt2, c_twelve, c_a, c_b, c_c, c_half; "
        "mov.b32 c_rsqrt2, 0x39A839A8; "
        "mov.b32 c_twelve, 0x4A004A00; "
        "mov.b32 c_a, 0x3C833C83; "
        "mov.b32 c_b, 0x2EAA2EAA; "
        "mov.b32 c_c, 0x97709770; "
        "mov.b32 c_half, 0x38003800; "
        "mul.rn.f16x2 z, $1, c_rsqrt2; mul.rn.f16x2 q, z, z; min.f16x2 q, q, c_twelve; "
        "fma.rn.f16x2 p, q, c_c, c_b; fma.rn.f16x2 p, p, q, c_a; mul.rn.f16x2 p, z, p; "
        "tanh.approx.f16x2 p, p; mul.rn.f16x2 h, $1, c_half; fma.rn.f16x2 $0, h, p, h; "
        "}",
        "=r,r",
        [x.to(gl.float16)],
        dtype=gl.float16,
        is_pure=True,
        pack=2,
    )


@gluon.jit
def _loader(x_desc, w1_desc, w2_desc, x_smem, w1_smem, w2_smem, x_ready, x_empty, w_ready,
            w_empty, M, N1):
    # shapes from the descriptors and buffers: constexprs passed through warp_specialize's
    # argument tuples arrive as int32 scalars (triton 3.6)
    BM: gl.constexpr = x_desc.block_type.shape[0]
    BN1: gl.constexpr = w1_desc.block_type.shape[0]
    NK: gl.constexpr = x_smem.type.shape[0] // 2
    STAGES: gl.constexpr = w2_smem.type.shape[0]
    NCH = N1 // BN1
    x_bytes: gl.constexpr = NK * x_desc.block_type.nbytes
    w1_bytes: gl.constexpr = NK * w1_desc.block_type.nbytes
    if _PART != 6:  # the math alone: nothing loaded, nothing waited for
        c = 0
        it = 0
        for t in range(gl.program_id(0), gl.cdiv(M, 2 * BM), gl.num_programs(0)):
            for cid in gl.static_range(2):
                mbarrier.wait(x_empty.index(cid), (it & 1) ^ 1)
                mbarrier.expect(x_ready.index(cid), x_bytes)
                for k in gl.static_range(NK):
                    tma.async_copy_global_to_shared(x_desc, [(2 * t + cid) * BM, k * KC],
                                                    x_ready.index(cid), x_smem.index(cid * NK + k))
            for j in range(NCH):
                # two rings (barriers s and STAGES + s): a first-layer slice is released as soon
                # as its wgmma retires, a step before the second-layer slice of the same columns
                s = c % STAGES
                phase = ((c // STAGES) & 1) ^ 1
                mbarrier.wait(w_empty.index(s), phase)
                mbarrier.expect(w_ready.index(s), w1_bytes)
                for k in gl.static_range(NK):
                    tma.async_copy_global_to_shared(w1_desc, [j * BN1, k * KC], w_ready.index(s),
                                                    w1_smem.index(s * NK + k))
                mbarrier.wait(w_empty.index(STAGES + s), phase)
                mbarrier.expect(w_ready.index(STAGES + s), w2_desc.block_type.nbytes)
                tma.async_copy_global_to_shared(w2_desc, [0, j * BN1], w_ready.index(STAGES + s),
                                                w2_smem.index(s))
                c += 1
            it += 1


@gluon.jit
def _first_layer(x_smem, w1_smem, s, acc1, cid: gl.constexpr, NK: gl.constexpr):
    """Issue slice s's first-layer wgmmas (async, one group per K box) into acc1."""
    if _PART != 3 and _PART != 5:
        for k in gl.static_range(NK):
            acc1 = warpgroup_mma(x_smem.index(cid * NK + k),
                                 w1_smem.index(s * NK + k).permute((1, 0)), acc1,
                                 use_acc=k > 0, is_async=True)
    return acc1


@gluon.jit
def _first_layer_x(x0, x1, x2, x3, w1_smem, s, acc1):
    """_first_layer with the x block's four K boxes in registers."""
    if _PART != 3 and _PART != 5:
        acc1 = warpgroup_mma(x0, w1_smem.index(s * 4 + 0).permute((1, 0)), acc1, use_acc=False,
                             is_async=True)
        acc1 = warpgroup_mma(x1, w1_smem.index(s * 4 + 1).permute((1, 0)), acc1, is_async=True)
        acc1 = warpgroup_mma(x2, w1_smem.index(s * 4 + 2).permute((1, 0)), acc1, is_async=True)
        acc1 = warpgroup_mma(x3, w1_smem.index(s * 4 + 3).permute((1, 0)), acc1, is_async=True)
    return acc1


@gluon.jit
def _second_layer(h, w2, acc2, use_acc):
    if _PART != 2 and _PART != 5:
        acc2 = warpgroup_mma(h, w2.permute((1, 0)), acc2, use_acc=use_acc, is_async=True)
    return acc2


@gluon.jit
def _hidden(acc1, b0):
    """The hidden slice as stored: GELU(acc1 + b0) in fp16."""
    if _PART == 1 or _PART == 5:
        h = (acc1 + b0[None, :]).to(gl.float16)
    else:
        h = _gelu_f16(acc1 + b0[None, :])
    return h


@gluon.jit
def _wait(bar, phase):
    """A consumer's wait for its x block or a weight slice (none when GLUON_MLP_PART=6)."""
    if _PART != 6:
        mbarrier.wait(bar, phase)


@gluon.jit
def _arrive(bar, count: gl.constexpr, pred=True):
    if _PART != 6:
        mbarrier.arrive(bar, count=count, pred=pred)


@gluon.jit
def _take_turn(turn, k, cid: gl.constexpr, PP: gl.constexpr):
    """Wait for this consumer's k-th turn to issue wgmmas: consumer 0's k-th follows consumer
    1's (k-1)-th, consumer 1's k-th follows consumer 0's k-th. Returns k + 1."""
    if PP:
        mbarrier.wait(turn.index(cid), (k + 1 - cid) & 1)
    return k + 1


@gluon.jit
def _pass_turn(turn, cid: gl.constexpr, PP: gl.constexpr):
    if PP:
        mbarrier.arrive(turn.index(1 - cid), count=1)


@gluon.jit
def _consumer(x_smem, w1_smem, w2_smem, h_smem, x_ready, x_empty, w_ready, w_empty, turn, b0_ptr,
              b1_ptr, y_ptr, M, N1, cid: gl.constexpr):
    NK: gl.constexpr = x_smem.type.shape[0] // 2
    BM: gl.constexpr = x_smem.type.shape[1]
    BN1: gl.constexpr = w1_smem.type.shape[1]
    STAGES: gl.constexpr = w2_smem.type.shape[0]
    N2: gl.constexpr = w2_smem.type.shape[1]
    NCH = N1 // BN1
    # ping-pong (FlashAttention-3): the consumers take turns issuing wgmmas (turn has two
    # barriers), so one's GELU runs while the other's wgmmas hold the tensor cores
    PP: gl.constexpr = turn.type.shape[0] == 2
    k = 0  # issue turns taken
    acc1_l: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                     instr_shape=[16, BN1, 16])
    acc2_l: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                     instr_shape=[16, N2, 16])
    cols1_l: gl.constexpr = gl.SliceLayout(0, acc1_l)
    cols2_l: gl.constexpr = gl.SliceLayout(0, acc2_l)
    rows2_l: gl.constexpr = gl.SliceLayout(1, acc2_l)
    n1 = gl.arange(0, BN1, layout=cols1_l)
    n2 = gl.arange(0, N2, layout=cols2_l)
    rows = gl.arange(0, BM, layout=rows2_l)
    acc1 = gl.zeros([BM, BN1], gl.float32, acc1_l)
    acc2 = gl.zeros([BM, N2], gl.float32, acc2_l)
    c = 0
    it = 0
    for t in range(gl.program_id(0), gl.cdiv(M, 2 * BM), gl.num_programs(0)):
        _wait(x_ready.index(cid), it & 1)
        if _XREG:
            gl.static_assert(NK == 4)
            xa_l: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=acc1_l, k_width=2)
            x0 = x_smem.index(cid * NK + 0).load(xa_l)
            x1 = x_smem.index(cid * NK + 1).load(xa_l)
            x2 = x_smem.index(cid * NK + 2).load(xa_l)
            x3 = x_smem.index(cid * NK + 3).load(xa_l)
            _arrive(x_empty.index(cid), count=1)  # the next block's x may land
        s = c % STAGES
        _wait(w_ready.index(s), (c // STAGES) & 1)
        k = _take_turn(turn, k, cid, PP)
        if _XREG:
            acc1 = _first_layer_x(x0, x1, x2, x3, w1_smem, s, acc1)
        else:
            acc1 = _first_layer(x_smem, w1_smem, s, acc1, cid, NK)
        _pass_turn(turn, cid, PP)
        b0 = gl.load(b0_ptr + n1).to(gl.float32)
        acc1 = warpgroup_mma_wait(0, deps=(acc1,))
        _arrive(w_empty.index(s), count=1)
        # the hidden slice goes to the second layer's wgmma through shared memory: an A operand
        # in registers, packed after the first layer's wgmmas were issued, makes ptxas
        # serialise every wgmma (C7513, seen compiling this kernel for sm_90a)
        h_smem.index(2 * cid).store(_hidden(acc1, b0))
        fence_async_shared()
        for j in range(NCH - 1):
            # slice j+1's first layer, then slice j's second; GELU(j+1) overlaps the latter
            s_next = (c + 1) % STAGES
            _wait(w_ready.index(s_next), ((c + 1) // STAGES) & 1)
            _wait(w_ready.index(STAGES + c % STAGES), (c // STAGES) & 1)
            k = _take_turn(turn, k, cid, PP)
            if _XREG:
                acc1 = _first_layer_x(x0, x1, x2, x3, w1_smem, s_next, acc1)
            else:
                acc1 = _first_layer(x_smem, w1_smem, s_next, acc1, cid, NK)
            acc2 = _second_layer(h_smem.index(2 * cid + j % 2), w2_smem.index(c % STAGES),
                                 acc2, j > 0)
            _pass_turn(turn, cid, PP)
            b0 = gl.load(b0_ptr + (j + 1) * BN1 + n1).to(gl.float32)
            # slice j-1's second-layer wgmma and slice j+1's first have retired
            acc1, acc2 = warpgroup_mma_wait(1, deps=(acc1, acc2))
            _arrive(w_empty.index(s_next), count=1)
            _arrive(w_empty.index(STAGES + (c + STAGES - 1) % STAGES), count=1,
                            pred=j > 0)
            h_smem.index(2 * cid + (j + 1) % 2).store(_hidden(acc1, b0))
            fence_async_shared()
            c += 1
        if not _XREG:  # the block's last first-layer wgmma is done
            _arrive(x_empty.index(cid), count=1)
        _wait(w_ready.index(STAGES + c % STAGES), (c // STAGES) & 1)
        k = _take_turn(turn, k, cid, PP)
        acc2 = _second_layer(h_smem.index(2 * cid + (NCH - 1) % 2), w2_smem.index(c % STAGES),
                             acc2, NCH > 1)
        _pass_turn(turn, cid, PP)
        acc2 = warpgroup_mma_wait(0, deps=(acc2,))
        if NCH > 1:
            _arrive(w_empty.index(STAGES + (c + STAGES - 1) % STAGES), count=1)
        _arrive(w_empty.index(STAGES + c % STAGES), count=1)
        c += 1
        it += 1
        # loaded here, not held across the block: 64 registers a thread in acc2's layout
        b1 = gl.load(b1_ptr + n2).to(gl.float32)
        y = (acc2 + b1[None, :]).to(gl.float16)
        r = (2 * t + cid) * BM + rows
        gl.store(y_ptr + r[:, None] * N2 + n2[None, :], y, mask=r[:, None] < M)


@gluon.jit
def _consumer0(x_smem, w1_smem, w2_smem, h_smem, x_ready, x_empty, w_ready, w_empty, turn, b0_ptr,
               b1_ptr, y_ptr, M, N1):
    _consumer(x_smem, w1_smem, w2_smem, h_smem, x_ready, x_empty, w_ready, w_empty, turn, b0_ptr,
              b1_ptr, y_ptr, M, N1, 0)


@gluon.jit
def _consumer1(x_smem, w1_smem, w2_smem, h_smem, x_ready, x_empty, w_ready, w_empty, turn, b0_ptr,
               b1_ptr, y_ptr, M, N1):
    _consumer(x_smem, w1_smem, w2_smem, h_smem, x_ready, x_empty, w_ready, w_empty, turn, b0_ptr,
              b1_ptr, y_ptr, M, N1, 1)


@gluon.jit
def fused_mlp_ws(x_desc, w1_desc, w2_desc, b0_ptr, b1_ptr, y_ptr, M,
                 BM: gl.constexpr, BN1: gl.constexpr, K0: gl.constexpr, N1: gl.constexpr,
                 N2: gl.constexpr, STAGES: gl.constexpr, CONSUMER_REGS: gl.constexpr,
                 LOADER_REGS: gl.constexpr, PINGPONG: gl.constexpr):
    NK: gl.constexpr = K0 // KC
    x_smem = gl.allocate_shared_memory(gl.float16, [2 * NK, BM, KC], x_desc.layout)
    w1_smem = gl.allocate_shared_memory(gl.float16, [STAGES * NK, BN1, KC], w1_desc.layout)
    w2_smem = gl.allocate_shared_memory(gl.float16, [STAGES, N2, BN1], w2_desc.layout)
    h_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BN1], gl.float16)
    h_smem = gl.allocate_shared_memory(gl.float16, [4, BM, BN1], h_layout)  # 2 per consumer
    x_ready = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    x_empty = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    # [s]: first-layer slice s, [STAGES + s]: second-layer slice s
    w_ready = gl.allocate_shared_memory(gl.int64, [2 * STAGES, 1], mbarrier.MBarrierLayout())
    w_empty = gl.allocate_shared_memory(gl.int64, [2 * STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(2):
        mbarrier.init(x_ready.index(i), count=1)
        mbarrier.init(x_empty.index(i), count=1)
    for i in gl.static_range(2 * STAGES):
        mbarrier.init(w_ready.index(i), count=1)
        mbarrier.init(w_empty.index(i), count=2)  # both consumers release a weight slice
    turn = gl.allocate_shared_memory(gl.int64, [1 + PINGPONG, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(1 + PINGPONG):
        mbarrier.init(turn.index(i), count=1)
    consumer_args = (x_smem, w1_smem, w2_smem, h_smem, x_ready, x_empty, w_ready, w_empty, turn,
                     b0_ptr, b1_ptr, y_ptr, M, N1)
    gl.warp_specialize([
        (_consumer0, consumer_args),
        (_consumer1, consumer_args),
        (_loader, (x_desc, w1_desc, w2_desc, x_smem, w1_smem, w2_smem, x_ready, x_empty,
                   w_ready, w_empty, M, N1)),
    ], [4, 1], [CONSUMER_REGS, LOADER_REGS])


def smem_bytes(bm, bn1, k0, n2, stages):
    return 2 * (2 * bm * k0 + stages * (bn1 * k0 + n2 * bn1) + 4 * bm * bn1)


class GluonMLP:
    """Launch wrapper: host-made TMA descriptors (cached per tensor address and rows; the
    probe times GPU work in CUDA graphs, where the launch's host cost is not counted)."""

    def __init__(self, bn1=64, stages=2, consumer_regs=240, loader_regs=24, pingpong=0, bm=64,
                 sms=None):
        self.bm, self.bn1, self.stages, self.pp = bm, bn1, stages, pingpong
        self.regs, self.lregs = consumer_regs, loader_regs
        self.sms = sms
        self.descs = {}

    def name(self):
        return f"gluon bn{self.bn1} st{self.stages}" + (" pingpong" if self.pp else "")

    def __call__(self, x, weights, biases, out=None):
        import torch

        m, k0 = x.shape
        w1, w2 = weights
        n1, n2 = w1.shape[0], w2.shape[0]
        y = out if out is not None else torch.empty(m, n2, dtype=x.dtype, device=x.device)
        key = (x.data_ptr(), m, w1.data_ptr(), w2.data_ptr())
        if key not in self.descs:
            f16 = gl.float16
            lx = gl.NVMMASharedLayout.get_default_for([self.bm, 64], f16)
            l1 = gl.NVMMASharedLayout.get_default_for([self.bn1, 64], f16)
            l2 = gl.NVMMASharedLayout.get_default_for([n2, self.bn1], f16)
            self.descs = {key: (
                TensorDescriptor.from_tensor(x, [self.bm, 64], lx),
                TensorDescriptor.from_tensor(w1, [self.bn1, 64], l1),
                TensorDescriptor.from_tensor(w2, [n2, self.bn1], l2),
            )}
        xd, w1d, w2d = self.descs[key]
        if self.sms is None:
            self.sms = torch.cuda.get_device_properties(x.device).multi_processor_count
        grid = (min(self.sms, triton.cdiv(m, 2 * self.bm)),)
        fused_mlp_ws[grid](xd, w1d, w2d, biases[0], biases[1], y, m, self.bm, self.bn1, k0, n1,
                           n2, self.stages, self.regs, self.lregs, self.pp, num_warps=4,
                           maxnreg=168)
        return y
