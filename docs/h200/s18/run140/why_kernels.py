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

