import triton
import triton.language as tl
from probe_chain import _gelu_f16


@triton.jit(do_not_specialize=['M'])
def _f0_l0(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    tl.extra.cuda.gdc_launch_dependents()
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 128
    rb = first + local % rows_in_group
    rows = (rb * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    acc = tl.zeros((64, 32), dtype=tl.float32)
    for k0 in range(0, 256, 64):
        ks = k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 256 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 256 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 512 + cols[None, :], _gelu_f16(acc), mask=rows[:, None] < M)
    tl.debug_barrier()
    tl.atomic_add(flag_ptr + rb, 1, sem='release')


@triton.jit(do_not_specialize=['M'])
def _f0_l1(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 64
    rb = first + local % rows_in_group
    rows = (rb * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    while tl.atomic_add(flag_ptr + rb, 0, sem='acquire') < 16:
        pass
    tl.debug_barrier()
    if tl.atomic_add(flag_ptr + rb, 1, sem='relaxed') == 23:
        tl.atomic_xchg(flag_ptr + rb, 0)
    acc = tl.zeros((64, 32), dtype=tl.float32)
    for k0 in range(0, 512, 64):
        ks = k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0, cache_modifier='.cg')
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)
    tl.extra.cuda.gdc_wait()


@triton.jit(do_not_specialize=['M'])
def _f1_l0(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    tl.extra.cuda.gdc_launch_dependents()
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 128
    rb = first + local % rows_in_group
    rows = (rb * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    acc = tl.zeros((64, 32), dtype=tl.float32)
    for k0 in range(0, 256, 64):
        ks = k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 256 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 256 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 512 + cols[None, :], _gelu_f16(acc), mask=rows[:, None] < M)
    tl.debug_barrier()
    tl.atomic_add(flag_ptr + rb, 1, sem='release')


@triton.jit(do_not_specialize=['M'])
def _f1_l1(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 128
    rb = first + local % rows_in_group
    rows = (rb * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 16 + tl.arange(0, 16)
    while tl.atomic_add(flag_ptr + rb, 0, sem='acquire') < 16:
        pass
    tl.debug_barrier()
    if tl.atomic_add(flag_ptr + rb, 1, sem='relaxed') == 31:
        tl.atomic_xchg(flag_ptr + rb, 0)
    acc = tl.zeros((64, 16), dtype=tl.float32)
    for k0 in range(0, 512, 64):
        ks = k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0, cache_modifier='.cg')
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)
    tl.extra.cuda.gdc_wait()


@triton.jit(do_not_specialize=['M'])
def _f2_l0(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    tl.extra.cuda.gdc_launch_dependents()
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 128
    rb = first + local % rows_in_group
    rows = (rb * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    acc = tl.zeros((64, 32), dtype=tl.float32)
    for k0 in range(0, 256, 128):
        ks = k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 256 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 256 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 512 + cols[None, :], _gelu_f16(acc), mask=rows[:, None] < M)
    tl.debug_barrier()
    tl.atomic_add(flag_ptr + rb, 1, sem='release')


@triton.jit(do_not_specialize=['M'])
def _f2_l1(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 64
    rb = first + local % rows_in_group
    rows = (rb * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    while tl.atomic_add(flag_ptr + rb, 0, sem='acquire') < 16:
        pass
    tl.debug_barrier()
    if tl.atomic_add(flag_ptr + rb, 1, sem='relaxed') == 23:
        tl.atomic_xchg(flag_ptr + rb, 0)
    acc = tl.zeros((64, 32), dtype=tl.float32)
    for k0 in range(0, 512, 128):
        ks = k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0, cache_modifier='.cg')
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)
    tl.extra.cuda.gdc_wait()


@triton.jit(do_not_specialize=['M'])
def _f3_l0(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    tl.extra.cuda.gdc_launch_dependents()
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 32)
    group = pid // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 128
    rb = first + local % rows_in_group
    rows = (rb * 32 + tl.arange(0, 32)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    acc = tl.zeros((32, 32), dtype=tl.float32)
    for k0 in range(0, 256, 64):
        ks = k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 256 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 256 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 512 + cols[None, :], _gelu_f16(acc), mask=rows[:, None] < M)
    tl.debug_barrier()
    tl.atomic_add(flag_ptr + rb, 1, sem='release')


@triton.jit(do_not_specialize=['M'])
def _f3_l1(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 32)
    group = pid // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 64
    rb = first + local % rows_in_group
    rows = (rb * 32 + tl.arange(0, 32)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    while tl.atomic_add(flag_ptr + rb, 0, sem='acquire') < 16:
        pass
    tl.debug_barrier()
    if tl.atomic_add(flag_ptr + rb, 1, sem='relaxed') == 23:
        tl.atomic_xchg(flag_ptr + rb, 0)
    acc = tl.zeros((32, 32), dtype=tl.float32)
    for k0 in range(0, 512, 64):
        ks = k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0, cache_modifier='.cg')
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)
    tl.extra.cuda.gdc_wait()


@triton.jit(do_not_specialize=['M'])
def _f4_l0(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    tl.extra.cuda.gdc_launch_dependents()
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 64
    rb = first + local % rows_in_group
    rows = (rb * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 64 + tl.arange(0, 64)
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for k0 in range(0, 256, 64):
        ks = k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 256 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 256 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 512 + cols[None, :], _gelu_f16(acc), mask=rows[:, None] < M)
    tl.debug_barrier()
    tl.atomic_add(flag_ptr + rb, 1, sem='release')


@triton.jit(do_not_specialize=['M'])
def _f4_l1(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 64
    rb = first + local % rows_in_group
    rows = (rb * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    while tl.atomic_add(flag_ptr + rb, 0, sem='acquire') < 8:
        pass
    tl.debug_barrier()
    if tl.atomic_add(flag_ptr + rb, 1, sem='relaxed') == 15:
        tl.atomic_xchg(flag_ptr + rb, 0)
    acc = tl.zeros((64, 32), dtype=tl.float32)
    for k0 in range(0, 512, 64):
        ks = k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0, cache_modifier='.cg')
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)
    tl.extra.cuda.gdc_wait()


@triton.jit(do_not_specialize=['M'])
def _f5_l0(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    tl.extra.cuda.gdc_launch_dependents()
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 256
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 256
    rb = first + local % rows_in_group
    rows = (rb * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 16 + tl.arange(0, 16)
    acc = tl.zeros((64, 16), dtype=tl.float32)
    for k0 in range(0, 256, 128):
        ks = k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 256 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 256 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 512 + cols[None, :], _gelu_f16(acc), mask=rows[:, None] < M)
    tl.debug_barrier()
    tl.atomic_add(flag_ptr + rb, 1, sem='release')


@triton.jit(do_not_specialize=['M'])
def _f5_l1(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 128
    rb = first + local % rows_in_group
    rows = (rb * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 16 + tl.arange(0, 16)
    while tl.atomic_add(flag_ptr + rb, 0, sem='acquire') < 32:
        pass
    tl.debug_barrier()
    if tl.atomic_add(flag_ptr + rb, 1, sem='relaxed') == 47:
        tl.atomic_xchg(flag_ptr + rb, 0)
    acc = tl.zeros((64, 16), dtype=tl.float32)
    for k0 in range(0, 512, 128):
        ks = k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0, cache_modifier='.cg')
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)
    tl.extra.cuda.gdc_wait()


@triton.jit(do_not_specialize=['M'])
def _f6_l0(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    tl.extra.cuda.gdc_launch_dependents()
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 32)
    group = pid // 256
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 256
    rb = first + local % rows_in_group
    rows = (rb * 32 + tl.arange(0, 32)).to(tl.int64)
    cols = (local // rows_in_group) * 16 + tl.arange(0, 16)
    acc = tl.zeros((32, 16), dtype=tl.float32)
    for k0 in range(0, 256, 128):
        ks = k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 256 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 256 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 512 + cols[None, :], _gelu_f16(acc), mask=rows[:, None] < M)
    tl.debug_barrier()
    tl.atomic_add(flag_ptr + rb, 1, sem='release')


@triton.jit(do_not_specialize=['M'])
def _f6_l1(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 32)
    group = pid // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 128
    rb = first + local % rows_in_group
    rows = (rb * 32 + tl.arange(0, 32)).to(tl.int64)
    cols = (local // rows_in_group) * 16 + tl.arange(0, 16)
    while tl.atomic_add(flag_ptr + rb, 0, sem='acquire') < 32:
        pass
    tl.debug_barrier()
    if tl.atomic_add(flag_ptr + rb, 1, sem='relaxed') == 47:
        tl.atomic_xchg(flag_ptr + rb, 0)
    acc = tl.zeros((32, 16), dtype=tl.float32)
    for k0 in range(0, 512, 128):
        ks = k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0, cache_modifier='.cg')
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)
    tl.extra.cuda.gdc_wait()


@triton.jit(do_not_specialize=['M'])
def _f7_l0(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    tl.extra.cuda.gdc_launch_dependents()
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 16)
    group = pid // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 128
    rb = first + local % rows_in_group
    rows = (rb * 16 + tl.arange(0, 16)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    acc = tl.zeros((16, 32), dtype=tl.float32)
    for k0 in range(0, 256, 128):
        ks = k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 256 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 256 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 512 + cols[None, :], _gelu_f16(acc), mask=rows[:, None] < M)
    tl.debug_barrier()
    tl.atomic_add(flag_ptr + rb, 1, sem='release')


@triton.jit(do_not_specialize=['M'])
def _f7_l1(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 16)
    group = pid // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 64
    rb = first + local % rows_in_group
    rows = (rb * 16 + tl.arange(0, 16)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    while tl.atomic_add(flag_ptr + rb, 0, sem='acquire') < 16:
        pass
    tl.debug_barrier()
    if tl.atomic_add(flag_ptr + rb, 1, sem='relaxed') == 23:
        tl.atomic_xchg(flag_ptr + rb, 0)
    acc = tl.zeros((16, 32), dtype=tl.float32)
    for k0 in range(0, 512, 128):
        ks = k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0, cache_modifier='.cg')
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)
    tl.extra.cuda.gdc_wait()


@triton.jit(do_not_specialize=['M'])
def _f8_l0(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    tl.extra.cuda.gdc_launch_dependents()
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 32)
    group = pid // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 128
    rb = first + local % rows_in_group
    rows = (rb * 32 + tl.arange(0, 32)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    acc = tl.zeros((32, 32), dtype=tl.float32)
    for k0 in range(0, 256, 128):
        ks = k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 256 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 256 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 512 + cols[None, :], _gelu_f16(acc), mask=rows[:, None] < M)
    tl.debug_barrier()
    tl.atomic_add(flag_ptr + rb, 1, sem='release')


@triton.jit(do_not_specialize=['M'])
def _f8_l1(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 32)
    group = pid // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 128
    rb = first + local % rows_in_group
    rows = (rb * 32 + tl.arange(0, 32)).to(tl.int64)
    cols = (local // rows_in_group) * 16 + tl.arange(0, 16)
    while tl.atomic_add(flag_ptr + rb, 0, sem='acquire') < 16:
        pass
    tl.debug_barrier()
    if tl.atomic_add(flag_ptr + rb, 1, sem='relaxed') == 31:
        tl.atomic_xchg(flag_ptr + rb, 0)
    acc = tl.zeros((32, 16), dtype=tl.float32)
    for k0 in range(0, 512, 128):
        ks = k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0, cache_modifier='.cg')
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)
    tl.extra.cuda.gdc_wait()

