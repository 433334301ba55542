import triton
import triton.language as tl


@triton.jit(do_not_specialize=['M'])
def _p_unrolled_m64_n32_k128(x_ptr, y_ptr, w_ptr, b_ptr, M):
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 64
    rows = ((first + local % rows_in_group) * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    bias = tl.load(b_ptr + cols).to(tl.float32)
    w0 = tl.load(w_ptr + cols[:, None] * 512 + 0 + tl.arange(0, 128)[None, :])
    w1 = tl.load(w_ptr + cols[:, None] * 512 + 128 + tl.arange(0, 128)[None, :])
    w2 = tl.load(w_ptr + cols[:, None] * 512 + 256 + tl.arange(0, 128)[None, :])
    w3 = tl.load(w_ptr + cols[:, None] * 512 + 384 + tl.arange(0, 128)[None, :])
    acc = tl.zeros((64, 32), dtype=tl.float32)
    a0 = tl.load(x_ptr + rows[:, None] * 512 + 0 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a1 = tl.load(x_ptr + rows[:, None] * 512 + 128 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a2 = tl.load(x_ptr + rows[:, None] * 512 + 256 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a3 = tl.load(x_ptr + rows[:, None] * 512 + 384 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a0, tl.trans(w0), acc)
    acc = tl.dot(a1, tl.trans(w1), acc)
    acc = tl.dot(a2, tl.trans(w2), acc)
    acc = tl.dot(a3, tl.trans(w3), acc)
    acc += bias[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)


@triton.jit(do_not_specialize=['M'])
def _p_pre_m64_n32_k128(x_ptr, y_ptr, w_ptr, b_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 64
    rows = ((first + local % rows_in_group) * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    bias = tl.load(b_ptr + cols).to(tl.float32)
    w0 = tl.load(w_ptr + cols[:, None] * 512 + 0 + tl.arange(0, 128)[None, :])
    w1 = tl.load(w_ptr + cols[:, None] * 512 + 128 + tl.arange(0, 128)[None, :])
    w2 = tl.load(w_ptr + cols[:, None] * 512 + 256 + tl.arange(0, 128)[None, :])
    w3 = tl.load(w_ptr + cols[:, None] * 512 + 384 + tl.arange(0, 128)[None, :])
    tl.extra.cuda.gdc_wait()
    acc = tl.zeros((64, 32), dtype=tl.float32)
    a0 = tl.load(x_ptr + rows[:, None] * 512 + 0 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a1 = tl.load(x_ptr + rows[:, None] * 512 + 128 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a2 = tl.load(x_ptr + rows[:, None] * 512 + 256 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a3 = tl.load(x_ptr + rows[:, None] * 512 + 384 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a0, tl.trans(w0), acc)
    acc = tl.dot(a1, tl.trans(w1), acc)
    acc = tl.dot(a2, tl.trans(w2), acc)
    acc = tl.dot(a3, tl.trans(w3), acc)
    acc += bias[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)


@triton.jit(do_not_specialize=['M'])
def _p_pre_m64_n32_k64(x_ptr, y_ptr, w_ptr, b_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 64
    rows = ((first + local % rows_in_group) * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    bias = tl.load(b_ptr + cols).to(tl.float32)
    w0 = tl.load(w_ptr + cols[:, None] * 512 + 0 + tl.arange(0, 64)[None, :])
    w1 = tl.load(w_ptr + cols[:, None] * 512 + 64 + tl.arange(0, 64)[None, :])
    w2 = tl.load(w_ptr + cols[:, None] * 512 + 128 + tl.arange(0, 64)[None, :])
    w3 = tl.load(w_ptr + cols[:, None] * 512 + 192 + tl.arange(0, 64)[None, :])
    w4 = tl.load(w_ptr + cols[:, None] * 512 + 256 + tl.arange(0, 64)[None, :])
    w5 = tl.load(w_ptr + cols[:, None] * 512 + 320 + tl.arange(0, 64)[None, :])
    w6 = tl.load(w_ptr + cols[:, None] * 512 + 384 + tl.arange(0, 64)[None, :])
    w7 = tl.load(w_ptr + cols[:, None] * 512 + 448 + tl.arange(0, 64)[None, :])
    tl.extra.cuda.gdc_wait()
    acc = tl.zeros((64, 32), dtype=tl.float32)
    a0 = tl.load(x_ptr + rows[:, None] * 512 + 0 + tl.arange(0, 64)[None, :], mask=rows[:, None] < M, other=0.0)
    a1 = tl.load(x_ptr + rows[:, None] * 512 + 64 + tl.arange(0, 64)[None, :], mask=rows[:, None] < M, other=0.0)
    a2 = tl.load(x_ptr + rows[:, None] * 512 + 128 + tl.arange(0, 64)[None, :], mask=rows[:, None] < M, other=0.0)
    a3 = tl.load(x_ptr + rows[:, None] * 512 + 192 + tl.arange(0, 64)[None, :], mask=rows[:, None] < M, other=0.0)
    a4 = tl.load(x_ptr + rows[:, None] * 512 + 256 + tl.arange(0, 64)[None, :], mask=rows[:, None] < M, other=0.0)
    a5 = tl.load(x_ptr + rows[:, None] * 512 + 320 + tl.arange(0, 64)[None, :], mask=rows[:, None] < M, other=0.0)
    a6 = tl.load(x_ptr + rows[:, None] * 512 + 384 + tl.arange(0, 64)[None, :], mask=rows[:, None] < M, other=0.0)
    a7 = tl.load(x_ptr + rows[:, None] * 512 + 448 + tl.arange(0, 64)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a0, tl.trans(w0), acc)
    acc = tl.dot(a1, tl.trans(w1), acc)
    acc = tl.dot(a2, tl.trans(w2), acc)
    acc = tl.dot(a3, tl.trans(w3), acc)
    acc = tl.dot(a4, tl.trans(w4), acc)
    acc = tl.dot(a5, tl.trans(w5), acc)
    acc = tl.dot(a6, tl.trans(w6), acc)
    acc = tl.dot(a7, tl.trans(w7), acc)
    acc += bias[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)


@triton.jit(do_not_specialize=['M'])
def _p_inter_m64_n32_k128(x_ptr, y_ptr, w_ptr, b_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 64
    rows = ((first + local % rows_in_group) * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    bias = tl.load(b_ptr + cols).to(tl.float32)
    w0 = tl.load(w_ptr + cols[:, None] * 512 + 0 + tl.arange(0, 128)[None, :])
    w1 = tl.load(w_ptr + cols[:, None] * 512 + 128 + tl.arange(0, 128)[None, :])
    w2 = tl.load(w_ptr + cols[:, None] * 512 + 256 + tl.arange(0, 128)[None, :])
    w3 = tl.load(w_ptr + cols[:, None] * 512 + 384 + tl.arange(0, 128)[None, :])
    tl.extra.cuda.gdc_wait()
    acc = tl.zeros((64, 32), dtype=tl.float32)
    a0 = tl.load(x_ptr + rows[:, None] * 512 + 0 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a0, tl.trans(w0), acc)
    a1 = tl.load(x_ptr + rows[:, None] * 512 + 128 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a1, tl.trans(w1), acc)
    a2 = tl.load(x_ptr + rows[:, None] * 512 + 256 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a2, tl.trans(w2), acc)
    a3 = tl.load(x_ptr + rows[:, None] * 512 + 384 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a3, tl.trans(w3), acc)
    acc += bias[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)


@triton.jit(do_not_specialize=['M'])
def _p_pre_m32_n32_k128(x_ptr, y_ptr, w_ptr, b_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 32)
    group = pid // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 64
    rows = ((first + local % rows_in_group) * 32 + tl.arange(0, 32)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    bias = tl.load(b_ptr + cols).to(tl.float32)
    w0 = tl.load(w_ptr + cols[:, None] * 512 + 0 + tl.arange(0, 128)[None, :])
    w1 = tl.load(w_ptr + cols[:, None] * 512 + 128 + tl.arange(0, 128)[None, :])
    w2 = tl.load(w_ptr + cols[:, None] * 512 + 256 + tl.arange(0, 128)[None, :])
    w3 = tl.load(w_ptr + cols[:, None] * 512 + 384 + tl.arange(0, 128)[None, :])
    tl.extra.cuda.gdc_wait()
    acc = tl.zeros((32, 32), dtype=tl.float32)
    a0 = tl.load(x_ptr + rows[:, None] * 512 + 0 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a1 = tl.load(x_ptr + rows[:, None] * 512 + 128 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a2 = tl.load(x_ptr + rows[:, None] * 512 + 256 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a3 = tl.load(x_ptr + rows[:, None] * 512 + 384 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a0, tl.trans(w0), acc)
    acc = tl.dot(a1, tl.trans(w1), acc)
    acc = tl.dot(a2, tl.trans(w2), acc)
    acc = tl.dot(a3, tl.trans(w3), acc)
    acc += bias[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)


@triton.jit(do_not_specialize=['M'])
def _p_pre_m64_n16_k128(x_ptr, y_ptr, w_ptr, b_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 128
    rows = ((first + local % rows_in_group) * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 16 + tl.arange(0, 16)
    bias = tl.load(b_ptr + cols).to(tl.float32)
    w0 = tl.load(w_ptr + cols[:, None] * 512 + 0 + tl.arange(0, 128)[None, :])
    w1 = tl.load(w_ptr + cols[:, None] * 512 + 128 + tl.arange(0, 128)[None, :])
    w2 = tl.load(w_ptr + cols[:, None] * 512 + 256 + tl.arange(0, 128)[None, :])
    w3 = tl.load(w_ptr + cols[:, None] * 512 + 384 + tl.arange(0, 128)[None, :])
    tl.extra.cuda.gdc_wait()
    acc = tl.zeros((64, 16), dtype=tl.float32)
    a0 = tl.load(x_ptr + rows[:, None] * 512 + 0 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a1 = tl.load(x_ptr + rows[:, None] * 512 + 128 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a2 = tl.load(x_ptr + rows[:, None] * 512 + 256 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a3 = tl.load(x_ptr + rows[:, None] * 512 + 384 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a0, tl.trans(w0), acc)
    acc = tl.dot(a1, tl.trans(w1), acc)
    acc = tl.dot(a2, tl.trans(w2), acc)
    acc = tl.dot(a3, tl.trans(w3), acc)
    acc += bias[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)


@triton.jit(do_not_specialize=['M'])
def _p_pre_m32_n16_k128(x_ptr, y_ptr, w_ptr, b_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 32)
    group = pid // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 128
    rows = ((first + local % rows_in_group) * 32 + tl.arange(0, 32)).to(tl.int64)
    cols = (local // rows_in_group) * 16 + tl.arange(0, 16)
    bias = tl.load(b_ptr + cols).to(tl.float32)
    w0 = tl.load(w_ptr + cols[:, None] * 512 + 0 + tl.arange(0, 128)[None, :])
    w1 = tl.load(w_ptr + cols[:, None] * 512 + 128 + tl.arange(0, 128)[None, :])
    w2 = tl.load(w_ptr + cols[:, None] * 512 + 256 + tl.arange(0, 128)[None, :])
    w3 = tl.load(w_ptr + cols[:, None] * 512 + 384 + tl.arange(0, 128)[None, :])
    tl.extra.cuda.gdc_wait()
    acc = tl.zeros((32, 16), dtype=tl.float32)
    a0 = tl.load(x_ptr + rows[:, None] * 512 + 0 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a1 = tl.load(x_ptr + rows[:, None] * 512 + 128 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a2 = tl.load(x_ptr + rows[:, None] * 512 + 256 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a3 = tl.load(x_ptr + rows[:, None] * 512 + 384 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a0, tl.trans(w0), acc)
    acc = tl.dot(a1, tl.trans(w1), acc)
    acc = tl.dot(a2, tl.trans(w2), acc)
    acc = tl.dot(a3, tl.trans(w3), acc)
    acc += bias[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)


@triton.jit(do_not_specialize=['M'])
def _p_pre_m64_n64_k128(x_ptr, y_ptr, w_ptr, b_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 32
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 32
    rows = ((first + local % rows_in_group) * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 64 + tl.arange(0, 64)
    bias = tl.load(b_ptr + cols).to(tl.float32)
    w0 = tl.load(w_ptr + cols[:, None] * 512 + 0 + tl.arange(0, 128)[None, :])
    w1 = tl.load(w_ptr + cols[:, None] * 512 + 128 + tl.arange(0, 128)[None, :])
    w2 = tl.load(w_ptr + cols[:, None] * 512 + 256 + tl.arange(0, 128)[None, :])
    w3 = tl.load(w_ptr + cols[:, None] * 512 + 384 + tl.arange(0, 128)[None, :])
    tl.extra.cuda.gdc_wait()
    acc = tl.zeros((64, 64), dtype=tl.float32)
    a0 = tl.load(x_ptr + rows[:, None] * 512 + 0 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a1 = tl.load(x_ptr + rows[:, None] * 512 + 128 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a2 = tl.load(x_ptr + rows[:, None] * 512 + 256 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a3 = tl.load(x_ptr + rows[:, None] * 512 + 384 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a0, tl.trans(w0), acc)
    acc = tl.dot(a1, tl.trans(w1), acc)
    acc = tl.dot(a2, tl.trans(w2), acc)
    acc = tl.dot(a3, tl.trans(w3), acc)
    acc += bias[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)


@triton.jit(do_not_specialize=['M'])
def _p_unrolled_m64_n16_k128(x_ptr, y_ptr, w_ptr, b_ptr, M):
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 128
    rows = ((first + local % rows_in_group) * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 16 + tl.arange(0, 16)
    bias = tl.load(b_ptr + cols).to(tl.float32)
    w0 = tl.load(w_ptr + cols[:, None] * 512 + 0 + tl.arange(0, 128)[None, :])
    w1 = tl.load(w_ptr + cols[:, None] * 512 + 128 + tl.arange(0, 128)[None, :])
    w2 = tl.load(w_ptr + cols[:, None] * 512 + 256 + tl.arange(0, 128)[None, :])
    w3 = tl.load(w_ptr + cols[:, None] * 512 + 384 + tl.arange(0, 128)[None, :])
    acc = tl.zeros((64, 16), dtype=tl.float32)
    a0 = tl.load(x_ptr + rows[:, None] * 512 + 0 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a1 = tl.load(x_ptr + rows[:, None] * 512 + 128 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a2 = tl.load(x_ptr + rows[:, None] * 512 + 256 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a3 = tl.load(x_ptr + rows[:, None] * 512 + 384 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a0, tl.trans(w0), acc)
    acc = tl.dot(a1, tl.trans(w1), acc)
    acc = tl.dot(a2, tl.trans(w2), acc)
    acc = tl.dot(a3, tl.trans(w3), acc)
    acc += bias[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)


@triton.jit(do_not_specialize=['M'])
def _p_inter_m64_n16_k128(x_ptr, y_ptr, w_ptr, b_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 64)
    group = pid // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 128
    rows = ((first + local % rows_in_group) * 64 + tl.arange(0, 64)).to(tl.int64)
    cols = (local // rows_in_group) * 16 + tl.arange(0, 16)
    bias = tl.load(b_ptr + cols).to(tl.float32)
    w0 = tl.load(w_ptr + cols[:, None] * 512 + 0 + tl.arange(0, 128)[None, :])
    w1 = tl.load(w_ptr + cols[:, None] * 512 + 128 + tl.arange(0, 128)[None, :])
    w2 = tl.load(w_ptr + cols[:, None] * 512 + 256 + tl.arange(0, 128)[None, :])
    w3 = tl.load(w_ptr + cols[:, None] * 512 + 384 + tl.arange(0, 128)[None, :])
    tl.extra.cuda.gdc_wait()
    acc = tl.zeros((64, 16), dtype=tl.float32)
    a0 = tl.load(x_ptr + rows[:, None] * 512 + 0 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a0, tl.trans(w0), acc)
    a1 = tl.load(x_ptr + rows[:, None] * 512 + 128 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a1, tl.trans(w1), acc)
    a2 = tl.load(x_ptr + rows[:, None] * 512 + 256 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a2, tl.trans(w2), acc)
    a3 = tl.load(x_ptr + rows[:, None] * 512 + 384 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a3, tl.trans(w3), acc)
    acc += bias[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)


@triton.jit(do_not_specialize=['M'])
def _p_pre_m16_n32_k128(x_ptr, y_ptr, w_ptr, b_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 16)
    group = pid // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 64
    rows = ((first + local % rows_in_group) * 16 + tl.arange(0, 16)).to(tl.int64)
    cols = (local // rows_in_group) * 32 + tl.arange(0, 32)
    bias = tl.load(b_ptr + cols).to(tl.float32)
    w0 = tl.load(w_ptr + cols[:, None] * 512 + 0 + tl.arange(0, 128)[None, :])
    w1 = tl.load(w_ptr + cols[:, None] * 512 + 128 + tl.arange(0, 128)[None, :])
    w2 = tl.load(w_ptr + cols[:, None] * 512 + 256 + tl.arange(0, 128)[None, :])
    w3 = tl.load(w_ptr + cols[:, None] * 512 + 384 + tl.arange(0, 128)[None, :])
    tl.extra.cuda.gdc_wait()
    acc = tl.zeros((16, 32), dtype=tl.float32)
    a0 = tl.load(x_ptr + rows[:, None] * 512 + 0 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a1 = tl.load(x_ptr + rows[:, None] * 512 + 128 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a2 = tl.load(x_ptr + rows[:, None] * 512 + 256 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a3 = tl.load(x_ptr + rows[:, None] * 512 + 384 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a0, tl.trans(w0), acc)
    acc = tl.dot(a1, tl.trans(w1), acc)
    acc = tl.dot(a2, tl.trans(w2), acc)
    acc = tl.dot(a3, tl.trans(w3), acc)
    acc += bias[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)


@triton.jit(do_not_specialize=['M'])
def _p_pre_m16_n16_k128(x_ptr, y_ptr, w_ptr, b_ptr, M):
    pid = tl.program_id(0)
    m_tiles = tl.cdiv(M, 16)
    group = pid // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = pid % 128
    rows = ((first + local % rows_in_group) * 16 + tl.arange(0, 16)).to(tl.int64)
    cols = (local // rows_in_group) * 16 + tl.arange(0, 16)
    bias = tl.load(b_ptr + cols).to(tl.float32)
    w0 = tl.load(w_ptr + cols[:, None] * 512 + 0 + tl.arange(0, 128)[None, :])
    w1 = tl.load(w_ptr + cols[:, None] * 512 + 128 + tl.arange(0, 128)[None, :])
    w2 = tl.load(w_ptr + cols[:, None] * 512 + 256 + tl.arange(0, 128)[None, :])
    w3 = tl.load(w_ptr + cols[:, None] * 512 + 384 + tl.arange(0, 128)[None, :])
    tl.extra.cuda.gdc_wait()
    acc = tl.zeros((16, 16), dtype=tl.float32)
    a0 = tl.load(x_ptr + rows[:, None] * 512 + 0 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a1 = tl.load(x_ptr + rows[:, None] * 512 + 128 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a2 = tl.load(x_ptr + rows[:, None] * 512 + 256 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    a3 = tl.load(x_ptr + rows[:, None] * 512 + 384 + tl.arange(0, 128)[None, :], mask=rows[:, None] < M, other=0.0)
    acc = tl.dot(a0, tl.trans(w0), acc)
    acc = tl.dot(a1, tl.trans(w1), acc)
    acc = tl.dot(a2, tl.trans(w2), acc)
    acc = tl.dot(a3, tl.trans(w3), acc)
    acc += bias[None, :]
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], acc.to(tl.float16), mask=rows[:, None] < M)

