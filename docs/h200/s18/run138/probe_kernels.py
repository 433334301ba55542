import triton
import triton.language as tl


@triton.jit(do_not_specialize=["M"])
def _p_sk_m64_n32_k64_s2(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(8192)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 2
    tile = pid // 2
    m_tiles = tl.cdiv(M, 64)
    group = tile // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 64
    row0 = (first + local % rows_in_group).to(tl.int64) * 64
    col0 = (local // rows_in_group) * 32
    lrow = tl.arange(0, 64)
    lcol = tl.arange(0, 32)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 256
    acc = tl.zeros((64, 32), dtype=tl.float32)
    for k0 in range(0, 256, 64):
        ks = kbase + k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 16)[None, :] + tl.zeros((64, 32), dtype=tl.int32)
    ok = tl.full((64, 32), 1, tl.int32)
    slot = rank * 1024 + _quad_slot(lrow[:, None], (lcol % 16)[None, :], 16) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 32)[:, None, None, None]
    jq = tl.arange(0, 8)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 16 + jq * 2 + lo
    ranks = tl.arange(0, 2)[:, None, None, None, None]
    word = ((rr * 8 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 1024 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m64_n32_k64_s4(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(8192)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 4
    tile = pid // 4
    m_tiles = tl.cdiv(M, 64)
    group = tile // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 64
    row0 = (first + local % rows_in_group).to(tl.int64) * 64
    col0 = (local // rows_in_group) * 32
    lrow = tl.arange(0, 64)
    lcol = tl.arange(0, 32)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 128
    acc = tl.zeros((64, 32), dtype=tl.float32)
    for k0 in range(0, 128, 64):
        ks = kbase + k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 8)[None, :] + tl.zeros((64, 32), dtype=tl.int32)
    ok = tl.full((64, 32), 1, tl.int32)
    slot = rank * 512 + _quad_slot(lrow[:, None], (lcol % 8)[None, :], 8) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 32)[:, None, None, None]
    jq = tl.arange(0, 4)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 8 + jq * 2 + lo
    ranks = tl.arange(0, 4)[:, None, None, None, None]
    word = ((rr * 4 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 512 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m64_n32_k128_s2(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(8192)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 2
    tile = pid // 2
    m_tiles = tl.cdiv(M, 64)
    group = tile // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 64
    row0 = (first + local % rows_in_group).to(tl.int64) * 64
    col0 = (local // rows_in_group) * 32
    lrow = tl.arange(0, 64)
    lcol = tl.arange(0, 32)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 256
    acc = tl.zeros((64, 32), dtype=tl.float32)
    for k0 in range(0, 256, 128):
        ks = kbase + k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 16)[None, :] + tl.zeros((64, 32), dtype=tl.int32)
    ok = tl.full((64, 32), 1, tl.int32)
    slot = rank * 1024 + _quad_slot(lrow[:, None], (lcol % 16)[None, :], 16) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 32)[:, None, None, None]
    jq = tl.arange(0, 8)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 16 + jq * 2 + lo
    ranks = tl.arange(0, 2)[:, None, None, None, None]
    word = ((rr * 8 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 1024 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m64_n64_k64_s2(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(16384)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 2
    tile = pid // 2
    m_tiles = tl.cdiv(M, 64)
    group = tile // 32
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 32
    row0 = (first + local % rows_in_group).to(tl.int64) * 64
    col0 = (local // rows_in_group) * 64
    lrow = tl.arange(0, 64)
    lcol = tl.arange(0, 64)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 256
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for k0 in range(0, 256, 64):
        ks = kbase + k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 32)[None, :] + tl.zeros((64, 64), dtype=tl.int32)
    ok = tl.full((64, 64), 1, tl.int32)
    slot = rank * 2048 + _quad_slot(lrow[:, None], (lcol % 32)[None, :], 32) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 32)[:, None, None, None]
    jq = tl.arange(0, 16)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 32 + jq * 2 + lo
    ranks = tl.arange(0, 2)[:, None, None, None, None]
    word = ((rr * 16 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 2048 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m64_n64_k64_s4(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(16384)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 4
    tile = pid // 4
    m_tiles = tl.cdiv(M, 64)
    group = tile // 32
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 32
    row0 = (first + local % rows_in_group).to(tl.int64) * 64
    col0 = (local // rows_in_group) * 64
    lrow = tl.arange(0, 64)
    lcol = tl.arange(0, 64)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 128
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for k0 in range(0, 128, 64):
        ks = kbase + k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 16)[None, :] + tl.zeros((64, 64), dtype=tl.int32)
    ok = tl.full((64, 64), 1, tl.int32)
    slot = rank * 1024 + _quad_slot(lrow[:, None], (lcol % 16)[None, :], 16) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 32)[:, None, None, None]
    jq = tl.arange(0, 8)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 16 + jq * 2 + lo
    ranks = tl.arange(0, 4)[:, None, None, None, None]
    word = ((rr * 8 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 1024 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m64_n64_k128_s2(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(16384)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 2
    tile = pid // 2
    m_tiles = tl.cdiv(M, 64)
    group = tile // 32
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 32
    row0 = (first + local % rows_in_group).to(tl.int64) * 64
    col0 = (local // rows_in_group) * 64
    lrow = tl.arange(0, 64)
    lcol = tl.arange(0, 64)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 256
    acc = tl.zeros((64, 64), dtype=tl.float32)
    for k0 in range(0, 256, 128):
        ks = kbase + k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 32)[None, :] + tl.zeros((64, 64), dtype=tl.int32)
    ok = tl.full((64, 64), 1, tl.int32)
    slot = rank * 2048 + _quad_slot(lrow[:, None], (lcol % 32)[None, :], 32) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 32)[:, None, None, None]
    jq = tl.arange(0, 16)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 32 + jq * 2 + lo
    ranks = tl.arange(0, 2)[:, None, None, None, None]
    word = ((rr * 16 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 2048 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m32_n32_k64_s2(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(4096)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 2
    tile = pid // 2
    m_tiles = tl.cdiv(M, 32)
    group = tile // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 64
    row0 = (first + local % rows_in_group).to(tl.int64) * 32
    col0 = (local // rows_in_group) * 32
    lrow = tl.arange(0, 32)
    lcol = tl.arange(0, 32)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 256
    acc = tl.zeros((32, 32), dtype=tl.float32)
    for k0 in range(0, 256, 64):
        ks = kbase + k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 16)[None, :] + tl.zeros((32, 32), dtype=tl.int32)
    ok = tl.full((32, 32), 1, tl.int32)
    slot = rank * 512 + _quad_slot(lrow[:, None], (lcol % 16)[None, :], 16) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 16)[:, None, None, None]
    jq = tl.arange(0, 8)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 16 + jq * 2 + lo
    ranks = tl.arange(0, 2)[:, None, None, None, None]
    word = ((rr * 8 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 512 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m64_n16_k64_s2(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(4096)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 2
    tile = pid // 2
    m_tiles = tl.cdiv(M, 64)
    group = tile // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 128
    row0 = (first + local % rows_in_group).to(tl.int64) * 64
    col0 = (local // rows_in_group) * 16
    lrow = tl.arange(0, 64)
    lcol = tl.arange(0, 16)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 256
    acc = tl.zeros((64, 16), dtype=tl.float32)
    for k0 in range(0, 256, 64):
        ks = kbase + k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 8)[None, :] + tl.zeros((64, 16), dtype=tl.int32)
    ok = tl.full((64, 16), 1, tl.int32)
    slot = rank * 512 + _quad_slot(lrow[:, None], (lcol % 8)[None, :], 8) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 32)[:, None, None, None]
    jq = tl.arange(0, 4)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 8 + jq * 2 + lo
    ranks = tl.arange(0, 2)[:, None, None, None, None]
    word = ((rr * 4 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 512 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m128_n32_k64_s2(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(16384)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 2
    tile = pid // 2
    m_tiles = tl.cdiv(M, 128)
    group = tile // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 64
    row0 = (first + local % rows_in_group).to(tl.int64) * 128
    col0 = (local // rows_in_group) * 32
    lrow = tl.arange(0, 128)
    lcol = tl.arange(0, 32)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 256
    acc = tl.zeros((128, 32), dtype=tl.float32)
    for k0 in range(0, 256, 64):
        ks = kbase + k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 16)[None, :] + tl.zeros((128, 32), dtype=tl.int32)
    ok = tl.full((128, 32), 1, tl.int32)
    slot = rank * 2048 + _quad_slot(lrow[:, None], (lcol % 16)[None, :], 16) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 64)[:, None, None, None]
    jq = tl.arange(0, 8)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 16 + jq * 2 + lo
    ranks = tl.arange(0, 2)[:, None, None, None, None]
    word = ((rr * 8 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 2048 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m128_n64_k64_s4(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(32768)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 4
    tile = pid // 4
    m_tiles = tl.cdiv(M, 128)
    group = tile // 32
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 32
    row0 = (first + local % rows_in_group).to(tl.int64) * 128
    col0 = (local // rows_in_group) * 64
    lrow = tl.arange(0, 128)
    lcol = tl.arange(0, 64)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 128
    acc = tl.zeros((128, 64), dtype=tl.float32)
    for k0 in range(0, 128, 64):
        ks = kbase + k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 16)[None, :] + tl.zeros((128, 64), dtype=tl.int32)
    ok = tl.full((128, 64), 1, tl.int32)
    slot = rank * 2048 + _quad_slot(lrow[:, None], (lcol % 16)[None, :], 16) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 64)[:, None, None, None]
    jq = tl.arange(0, 8)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 16 + jq * 2 + lo
    ranks = tl.arange(0, 4)[:, None, None, None, None]
    word = ((rr * 8 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 2048 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m64_n16_k128_s2(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(4096)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 2
    tile = pid // 2
    m_tiles = tl.cdiv(M, 64)
    group = tile // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 128
    row0 = (first + local % rows_in_group).to(tl.int64) * 64
    col0 = (local // rows_in_group) * 16
    lrow = tl.arange(0, 64)
    lcol = tl.arange(0, 16)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 256
    acc = tl.zeros((64, 16), dtype=tl.float32)
    for k0 in range(0, 256, 128):
        ks = kbase + k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 8)[None, :] + tl.zeros((64, 16), dtype=tl.int32)
    ok = tl.full((64, 16), 1, tl.int32)
    slot = rank * 512 + _quad_slot(lrow[:, None], (lcol % 8)[None, :], 8) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 32)[:, None, None, None]
    jq = tl.arange(0, 4)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 8 + jq * 2 + lo
    ranks = tl.arange(0, 2)[:, None, None, None, None]
    word = ((rr * 4 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 512 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m64_n16_k128_s4(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(4096)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 4
    tile = pid // 4
    m_tiles = tl.cdiv(M, 64)
    group = tile // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 128
    row0 = (first + local % rows_in_group).to(tl.int64) * 64
    col0 = (local // rows_in_group) * 16
    lrow = tl.arange(0, 64)
    lcol = tl.arange(0, 16)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 128
    acc = tl.zeros((64, 16), dtype=tl.float32)
    for k0 in range(0, 128, 128):
        ks = kbase + k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 4)[None, :] + tl.zeros((64, 16), dtype=tl.int32)
    ok = tl.full((64, 16), 1, tl.int32)
    slot = rank * 256 + _quad_slot(lrow[:, None], (lcol % 4)[None, :], 4) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 32)[:, None, None, None]
    jq = tl.arange(0, 2)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 4 + jq * 2 + lo
    ranks = tl.arange(0, 4)[:, None, None, None, None]
    word = ((rr * 2 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 256 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m64_n32_k128_s4(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(8192)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 4
    tile = pid // 4
    m_tiles = tl.cdiv(M, 64)
    group = tile // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 64
    row0 = (first + local % rows_in_group).to(tl.int64) * 64
    col0 = (local // rows_in_group) * 32
    lrow = tl.arange(0, 64)
    lcol = tl.arange(0, 32)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 128
    acc = tl.zeros((64, 32), dtype=tl.float32)
    for k0 in range(0, 128, 128):
        ks = kbase + k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 8)[None, :] + tl.zeros((64, 32), dtype=tl.int32)
    ok = tl.full((64, 32), 1, tl.int32)
    slot = rank * 512 + _quad_slot(lrow[:, None], (lcol % 8)[None, :], 8) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 32)[:, None, None, None]
    jq = tl.arange(0, 4)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 8 + jq * 2 + lo
    ranks = tl.arange(0, 4)[:, None, None, None, None]
    word = ((rr * 4 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 512 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m32_n16_k128_s2(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(2048)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 2
    tile = pid // 2
    m_tiles = tl.cdiv(M, 32)
    group = tile // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 128
    row0 = (first + local % rows_in_group).to(tl.int64) * 32
    col0 = (local // rows_in_group) * 16
    lrow = tl.arange(0, 32)
    lcol = tl.arange(0, 16)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 256
    acc = tl.zeros((32, 16), dtype=tl.float32)
    for k0 in range(0, 256, 128):
        ks = kbase + k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 8)[None, :] + tl.zeros((32, 16), dtype=tl.int32)
    ok = tl.full((32, 16), 1, tl.int32)
    slot = rank * 256 + _quad_slot(lrow[:, None], (lcol % 8)[None, :], 8) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 16)[:, None, None, None]
    jq = tl.arange(0, 4)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 8 + jq * 2 + lo
    ranks = tl.arange(0, 2)[:, None, None, None, None]
    word = ((rr * 4 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 256 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m16_n16_k128_s2(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(1024)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 2
    tile = pid // 2
    m_tiles = tl.cdiv(M, 16)
    group = tile // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 128
    row0 = (first + local % rows_in_group).to(tl.int64) * 16
    col0 = (local // rows_in_group) * 16
    lrow = tl.arange(0, 16)
    lcol = tl.arange(0, 16)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 256
    acc = tl.zeros((16, 16), dtype=tl.float32)
    for k0 in range(0, 256, 128):
        ks = kbase + k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 8)[None, :] + tl.zeros((16, 16), dtype=tl.int32)
    ok = tl.full((16, 16), 1, tl.int32)
    slot = rank * 128 + _quad_slot(lrow[:, None], (lcol % 8)[None, :], 8) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 8)[:, None, None, None]
    jq = tl.arange(0, 4)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 8 + jq * 2 + lo
    ranks = tl.arange(0, 2)[:, None, None, None, None]
    word = ((rr * 4 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 128 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m32_n32_k128_s4(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(4096)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 4
    tile = pid // 4
    m_tiles = tl.cdiv(M, 32)
    group = tile // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 64
    row0 = (first + local % rows_in_group).to(tl.int64) * 32
    col0 = (local // rows_in_group) * 32
    lrow = tl.arange(0, 32)
    lcol = tl.arange(0, 32)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 128
    acc = tl.zeros((32, 32), dtype=tl.float32)
    for k0 in range(0, 128, 128):
        ks = kbase + k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 8)[None, :] + tl.zeros((32, 32), dtype=tl.int32)
    ok = tl.full((32, 32), 1, tl.int32)
    slot = rank * 256 + _quad_slot(lrow[:, None], (lcol % 8)[None, :], 8) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 16)[:, None, None, None]
    jq = tl.arange(0, 4)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 8 + jq * 2 + lo
    ranks = tl.arange(0, 4)[:, None, None, None, None]
    word = ((rr * 4 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 256 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m16_n16_k128_s4(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(1024)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 4
    tile = pid // 4
    m_tiles = tl.cdiv(M, 16)
    group = tile // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 128
    row0 = (first + local % rows_in_group).to(tl.int64) * 16
    col0 = (local // rows_in_group) * 16
    lrow = tl.arange(0, 16)
    lcol = tl.arange(0, 16)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 128
    acc = tl.zeros((16, 16), dtype=tl.float32)
    for k0 in range(0, 128, 128):
        ks = kbase + k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 4)[None, :] + tl.zeros((16, 16), dtype=tl.int32)
    ok = tl.full((16, 16), 1, tl.int32)
    slot = rank * 64 + _quad_slot(lrow[:, None], (lcol % 4)[None, :], 4) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 8)[:, None, None, None]
    jq = tl.arange(0, 2)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 4 + jq * 2 + lo
    ranks = tl.arange(0, 4)[:, None, None, None, None]
    word = ((rr * 2 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 64 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m16_n32_k128_s2(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(2048)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 2
    tile = pid // 2
    m_tiles = tl.cdiv(M, 16)
    group = tile // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 64
    row0 = (first + local % rows_in_group).to(tl.int64) * 16
    col0 = (local // rows_in_group) * 32
    lrow = tl.arange(0, 16)
    lcol = tl.arange(0, 32)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 256
    acc = tl.zeros((16, 32), dtype=tl.float32)
    for k0 in range(0, 256, 128):
        ks = kbase + k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 16)[None, :] + tl.zeros((16, 32), dtype=tl.int32)
    ok = tl.full((16, 32), 1, tl.int32)
    slot = rank * 256 + _quad_slot(lrow[:, None], (lcol % 16)[None, :], 16) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 8)[:, None, None, None]
    jq = tl.arange(0, 8)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 16 + jq * 2 + lo
    ranks = tl.arange(0, 2)[:, None, None, None, None]
    word = ((rr * 8 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 256 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m16_n32_k128_s4(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(2048)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 4
    tile = pid // 4
    m_tiles = tl.cdiv(M, 16)
    group = tile // 64
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 64
    row0 = (first + local % rows_in_group).to(tl.int64) * 16
    col0 = (local // rows_in_group) * 32
    lrow = tl.arange(0, 16)
    lcol = tl.arange(0, 32)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 128
    acc = tl.zeros((16, 32), dtype=tl.float32)
    for k0 in range(0, 128, 128):
        ks = kbase + k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 8)[None, :] + tl.zeros((16, 32), dtype=tl.int32)
    ok = tl.full((16, 32), 1, tl.int32)
    slot = rank * 128 + _quad_slot(lrow[:, None], (lcol % 8)[None, :], 8) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 8)[:, None, None, None]
    jq = tl.arange(0, 4)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 8 + jq * 2 + lo
    ranks = tl.arange(0, 4)[:, None, None, None, None]
    word = ((rr * 4 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 128 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m16_n16_k64_s2(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(1024)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 2
    tile = pid // 2
    m_tiles = tl.cdiv(M, 16)
    group = tile // 128
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 128
    row0 = (first + local % rows_in_group).to(tl.int64) * 16
    col0 = (local // rows_in_group) * 16
    lrow = tl.arange(0, 16)
    lcol = tl.arange(0, 16)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 256
    acc = tl.zeros((16, 16), dtype=tl.float32)
    for k0 in range(0, 256, 64):
        ks = kbase + k0 + tl.arange(0, 64)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 8)[None, :] + tl.zeros((16, 16), dtype=tl.int32)
    ok = tl.full((16, 16), 1, tl.int32)
    slot = rank * 128 + _quad_slot(lrow[:, None], (lcol % 8)[None, :], 8) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 8)[:, None, None, None]
    jq = tl.arange(0, 4)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 8 + jq * 2 + lo
    ranks = tl.arange(0, 2)[:, None, None, None, None]
    word = ((rr * 4 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 128 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)


@triton.jit(do_not_specialize=["M"])
def _p_sk_m16_n64_k128_s8(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer(4096)
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % 8
    tile = pid // 8
    m_tiles = tl.cdiv(M, 16)
    group = tile // 32
    first = group * 8
    rows_in_group = tl.minimum(m_tiles - first, 8)
    local = tile % 32
    row0 = (first + local % rows_in_group).to(tl.int64) * 16
    col0 = (local // rows_in_group) * 64
    lrow = tl.arange(0, 16)
    lcol = tl.arange(0, 64)
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * 64
    acc = tl.zeros((16, 64), dtype=tl.float32)
    for k0 in range(0, 64, 128):
        ks = kbase + k0 + tl.arange(0, 128)
        a = tl.load(x_ptr + rows[:, None] * 512 + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * 512 + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // 8)[None, :] + tl.zeros((16, 64), dtype=tl.int32)
    ok = tl.full((16, 64), 1, tl.int32)
    slot = rank * 128 + _quad_slot(lrow[:, None], (lcol % 8)[None, :], 8) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, 8)[:, None, None, None]
    jq = tl.arange(0, 4)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * 8 + jq * 2 + lo
    ranks = tl.arange(0, 8)[:, None, None, None, None]
    word = ((rr * 4 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 128 + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * 256 + out_cols, out.to(tl.float16), mask=out_rows < M)

