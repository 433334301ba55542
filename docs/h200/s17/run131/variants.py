@triton.jit(do_not_specialize=["M"])
def _k_cluster_m16_c32_k128_v0(x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, M):
    pass


@triton.jit(do_not_specialize=["M"])
def _k_cluster_m16_c32_k128_v1(x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, M):
    pass


@triton.jit(do_not_specialize=["M"])
def _k_cluster_m16_c32_k128_v2(x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, M):
    base = _cluster_buffer(16384)
    _cluster_arrive()
    dep = _cluster_wait()
    dep += _cluster_sync()
    tl.store(y_ptr + tl.program_id(0) * 0 + dep, 0.0)


@triton.jit(do_not_specialize=["M"])
def _k_cluster_m16_c32_k128_v3(x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, M):
    # cluster: BLOCK_M=16, chunk=32, BLOCK_K=128, 16 CTAs a cluster, 16 output columns each
    base = _cluster_buffer(16384)
    pid = tl.program_id(0)
    rank = pid % 16
    local = tl.arange(0, 16)
    rows = (pid // 16).to(tl.int64) * 16 + local
    row_ok = rows[:, None] < M
    hid = rank * 32 + tl.arange(0, 32)
    # hidden columns hid: 256 -> 512, gelu
    s = tl.zeros((16, 32), dtype=tl.float32)
    for k0 in tl.static_range(0, 256, 128):
        ks = k0 + tl.arange(0, 128)
        a = tl.load(
            x_ptr + rows[:, None] * 256 + ks[None, :],
            mask=row_ok,
            other=0.0,
        )
        w = tl.load(
            w0_ptr + hid[:, None] * 256 + ks[None, :],
        )
        s = tl.dot(a, tl.trans(w), s)
    s += tl.load(b0_ptr + hid).to(tl.float32)[None, :]
    h = _gelu_f16(s)
    # 512 -> 256: this slice's share of every output
    ns = tl.arange(0, 256)
    w = tl.load(
        w1_ptr + ns[:, None] * 512 + hid[None, :],
    )
    part = tl.dot(h, tl.trans(w))
    # this CTA's outputs as _quad_slot lays them out, [rr, jq, hi, lo]: row (rr // 8) * 16 +
    # hi * 8 + rr % 8 of the block, owned column jq * 2 + lo (a warp's reads are adjacent words)
    rr = tl.arange(0, 8)[:, None, None, None]
    jq = tl.arange(0, 8)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = (pid // 16).to(tl.int64) * 16 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = rank * 16 + jq * 2 + lo
    bias = tl.load(b1_ptr + out_cols, mask=out_cols < 256, other=0.0).to(tl.float32)
    # every CTA of the cluster runs: store each partial into its column owner's slot `rank`
    dep = 0
    owner = (ns // 16)[None, :] + tl.zeros((16, 256), dtype=tl.int32)
    ok = (row_ok & (ns[None, :] < 256)).to(tl.int32)
    slot = rank * 256 + _quad_slot(local[:, None], (ns % 16)[None, :], 16) + dep
    # every CTA's stores are visible: sum this CTA's columns over the slots (a fixed order)
    dep = 0
    ranks = tl.arange(0, 16)[:, None, None, None, None]
    word = ((rr * 8 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum((ranks * 256 + word + dep) * 0.0, axis=0) + tl.sum(part)
    out += bias
    out = out.to(tl.float16)
    tl.store(y_ptr + out_rows * 256 + out_cols, out, mask=(out_rows < M) & (out_cols < 256))


@triton.jit(do_not_specialize=["M"])
def _k_cluster_m16_c32_k128_v4(x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, M):
    # cluster: BLOCK_M=16, chunk=32, BLOCK_K=128, 16 CTAs a cluster, 16 output columns each
    base = _cluster_buffer(16384)
    pid = tl.program_id(0)
    rank = pid % 16
    local = tl.arange(0, 16)
    rows = (pid // 16).to(tl.int64) * 16 + local
    row_ok = rows[:, None] < M
    _cluster_arrive()
    hid = rank * 32 + tl.arange(0, 32)
    # hidden columns hid: 256 -> 512, gelu
    s = tl.zeros((16, 32), dtype=tl.float32)
    for k0 in tl.static_range(0, 256, 128):
        ks = k0 + tl.arange(0, 128)
        a = tl.load(
            x_ptr + rows[:, None] * 256 + ks[None, :],
            mask=row_ok,
            other=0.0,
        )
        w = tl.load(
            w0_ptr + hid[:, None] * 256 + ks[None, :],
        )
        s = tl.dot(a, tl.trans(w), s)
    s += tl.load(b0_ptr + hid).to(tl.float32)[None, :]
    h = _gelu_f16(s)
    # 512 -> 256: this slice's share of every output
    ns = tl.arange(0, 256)
    w = tl.load(
        w1_ptr + ns[:, None] * 512 + hid[None, :],
    )
    part = tl.dot(h, tl.trans(w))
    # this CTA's outputs as _quad_slot lays them out, [rr, jq, hi, lo]: row (rr // 8) * 16 +
    # hi * 8 + rr % 8 of the block, owned column jq * 2 + lo (a warp's reads are adjacent words)
    rr = tl.arange(0, 8)[:, None, None, None]
    jq = tl.arange(0, 8)[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = (pid // 16).to(tl.int64) * 16 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = rank * 16 + jq * 2 + lo
    bias = tl.load(b1_ptr + out_cols, mask=out_cols < 256, other=0.0).to(tl.float32)
    # every CTA of the cluster runs: store each partial into its column owner's slot `rank`
    dep = _cluster_wait()
    owner = (ns // 16)[None, :] + tl.zeros((16, 256), dtype=tl.int32)
    ok = (row_ok & (ns[None, :] < 256)).to(tl.int32)
    slot = rank * 256 + _quad_slot(local[:, None], (ns % 16)[None, :], 16) + dep
    _cluster_store(slot, base, owner, ok * 0, part)
    # every CTA's stores are visible: sum this CTA's columns over the slots (a fixed order)
    dep = _cluster_sync()
    ranks = tl.arange(0, 16)[:, None, None, None, None]
    word = ((rr * 8 + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * 256 + word + dep, base), axis=0)
    out += bias
    out = out.to(tl.float16)
    tl.store(y_ptr + out_rows * 256 + out_cols, out, mask=(out_rows < M) & (out_cols < 256))


@triton.jit(do_not_specialize=["M"])
def _k_cluster_m1_c32_k128_v0(x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, M):
    pass


@triton.jit(do_not_specialize=["M"])
def _k_cluster_m1_c32_k128_v1(x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, M):
    pass


@triton.jit(do_not_specialize=["M"])
def _k_cluster_m1_c32_k128_v2(x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, M):
    base = _cluster_buffer(1024)
    _cluster_arrive()
    dep = _cluster_wait()
    dep += _cluster_sync()
    tl.store(y_ptr + tl.program_id(0) * 0 + dep, 0.0)


@triton.jit(do_not_specialize=["M"])
def _k_cluster_m1_c32_k128_v3(x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, M):
    # cluster: 1 row(s) a cluster on the CUDA cores, chunk=32, BLOCK_K=128, 16 CTAs a cluster, 16 output columns each
    base = _cluster_buffer(1024)
    pid = tl.program_id(0)
    rank = pid % 16
    row0 = (pid // 16).to(tl.int64) * 1
    hid = rank * 32 + tl.arange(0, 32)
    ns = tl.arange(0, 256)
    # everything this CTA reads, in flight together: x rows, the first layer's k tiles, the second's
    ks0 = 0 + tl.arange(0, 128)
    a0_0 = tl.load(x_ptr + (row0 + 0) * 256 + ks0, mask=(row0 + 0 < M), other=0.0)
    ks1 = 128 + tl.arange(0, 128)
    a0_1 = tl.load(x_ptr + (row0 + 0) * 256 + ks1, mask=(row0 + 0 < M), other=0.0)
    w0_0 = tl.load(
        w0_ptr + hid[:, None] * 256 + ks0[None, :],
    )
    w0_1 = tl.load(
        w0_ptr + hid[:, None] * 256 + ks1[None, :],
    )
    w1 = tl.load(
        w1_ptr + ns[:, None] * 512 + hid[None, :],
    )
    cols = rank * 16 + tl.arange(0, 16)
    bias0 = tl.load(b0_ptr + hid).to(tl.float32)
    bias1 = tl.load(b1_ptr + cols, mask=cols < 256, other=0.0).to(tl.float32)
    # row 0: 256 -> 512 (gelu) for hidden columns hid, then their share of every output
    s = bias0
    s += tl.sum(w0_0.to(tl.float32) * a0_0.to(tl.float32)[None, :], axis=1)
    s += tl.sum(w0_1.to(tl.float32) * a0_1.to(tl.float32)[None, :], axis=1)
    h = _gelu_f16(s)
    part0 = tl.sum(w1.to(tl.float32) * h.to(tl.float32)[None, :], axis=1)
    # every CTA of the cluster runs: store each partial into its column owner's slot (rank, row)
    dep = 0
    owner = ns // 16
    ok = ((row0 + 0 < M) & (ns < 256)).to(tl.int32)
    # every CTA's stores are visible: sum this CTA's columns over the slots (a fixed order)
    dep = 0
    ranks = tl.arange(0, 16)
    mine = tl.arange(0, 16)
    out = tl.sum(((ranks[:, None] * 1 + 0) * 16 + mine[None, :] + dep) * 0.0, axis=0) + tl.sum(part0)
    out += bias1
    out = out.to(tl.float16)
    tl.store(y_ptr + (row0 + 0) * 256 + cols, out, mask=(row0 + 0 < M) & (cols < 256))


@triton.jit(do_not_specialize=["M"])
def _k_cluster_m1_c32_k128_v4(x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, M):
    # cluster: 1 row(s) a cluster on the CUDA cores, chunk=32, BLOCK_K=128, 16 CTAs a cluster, 16 output columns each
    base = _cluster_buffer(1024)
    pid = tl.program_id(0)
    rank = pid % 16
    row0 = (pid // 16).to(tl.int64) * 1
    _cluster_arrive()
    hid = rank * 32 + tl.arange(0, 32)
    ns = tl.arange(0, 256)
    # everything this CTA reads, in flight together: x rows, the first layer's k tiles, the second's
    ks0 = 0 + tl.arange(0, 128)
    a0_0 = tl.load(x_ptr + (row0 + 0) * 256 + ks0, mask=(row0 + 0 < M), other=0.0)
    ks1 = 128 + tl.arange(0, 128)
    a0_1 = tl.load(x_ptr + (row0 + 0) * 256 + ks1, mask=(row0 + 0 < M), other=0.0)
    w0_0 = tl.load(
        w0_ptr + hid[:, None] * 256 + ks0[None, :],
    )
    w0_1 = tl.load(
        w0_ptr + hid[:, None] * 256 + ks1[None, :],
    )
    w1 = tl.load(
        w1_ptr + ns[:, None] * 512 + hid[None, :],
    )
    cols = rank * 16 + tl.arange(0, 16)
    bias0 = tl.load(b0_ptr + hid).to(tl.float32)
    bias1 = tl.load(b1_ptr + cols, mask=cols < 256, other=0.0).to(tl.float32)
    # row 0: 256 -> 512 (gelu) for hidden columns hid, then their share of every output
    s = bias0
    s += tl.sum(w0_0.to(tl.float32) * a0_0.to(tl.float32)[None, :], axis=1)
    s += tl.sum(w0_1.to(tl.float32) * a0_1.to(tl.float32)[None, :], axis=1)
    h = _gelu_f16(s)
    part0 = tl.sum(w1.to(tl.float32) * h.to(tl.float32)[None, :], axis=1)
    # every CTA of the cluster runs: store each partial into its column owner's slot (rank, row)
    dep = _cluster_wait()
    owner = ns // 16
    ok = ((row0 + 0 < M) & (ns < 256)).to(tl.int32)
    _cluster_store1((rank * 1 + 0) * 16 + ns % 16 + dep, base, owner, ok * 0, part0)
    # every CTA's stores are visible: sum this CTA's columns over the slots (a fixed order)
    dep = _cluster_sync()
    ranks = tl.arange(0, 16)
    mine = tl.arange(0, 16)
    out = tl.sum(_cluster_load((ranks[:, None] * 1 + 0) * 16 + mine[None, :] + dep, base), axis=0)
    out += bias1
    out = out.to(tl.float16)
    tl.store(y_ptr + (row0 + 0) * 256 + cols, out, mask=(row0 + 0 < M) & (cols < 256))
