"""Session 18 probe: chain's last layer split over k across a thread-block cluster, and chain's
two layers with tiles of their own.

chain (kernel_layered.j2) runs the headline's 512 -> 256 layer as one program per
block_m x block_n output tile, each looping over all 512 k; at 256-1024 rows that is 64-128
programs on 132 SMs. Here the last layer's tile is split over k across the S CTAs of a cluster:
CTA r sums k in [r * 512 / S, (r + 1) * 512 / S) (the same pipelined loop), then hands its
partial tile over as the cluster strategy does (kernel_cluster.j2: four values a remote store
into the owner's slot, _quad_slot; CTA r owns block_n / S columns), and after the cluster
barrier each owner sums the S slots in a fixed order, adds the bias and stores. Launched with
PDL (griddepcontrol.wait before any load) and as clusters in one launch. "base" is the shipped
chain kernel; layer 0 is a chain kernel of the module, the shipped tile or ("l0" cases) others,
so the two layers' tiles can differ. Every variant is checked against the fp32 reference
(NaN-poisoned output, rows past M untouched) at the timed M, M+13 and 37 rows, 2 seeds; then GPU
us per call as the tuner measures it (measure.gpu_us: CUDA graph of 20 calls) and one call
captured in a CUDA graph and replayed 200 times, variants alternating, medians of 5.
Run from the repository root: python3 docs/h200/s18/splitk_probe.py OUT"""

import importlib.util
import statistics
import sys
from pathlib import Path

import torch
import triton

from mlpgen.emit import entry, read_module, render
from mlpgen.measure import check, device_problem, gpu_us
from mlpgen.selfcheck import load_module
from mlpgen.spec import KernelConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "s17"))
from prefetch_probe import replay  # noqa: E402

SRC = Path("tuned/mlp_256x512x256_gelu_fp16.py")
GROUP = 8  # the module's group of row tiles (kernel_layered.j2)
K, N, HID = 512, 256, 512  # the headline's last layer
# rows -> (shipped layer-0 tile, [(layer-0 tile, layer-1 tile, S CTAs a cluster or 0: base)])
CASES = {
    1024: ((64, 32, 64), [
        (None, (64, 32, 64), 0), (None, (64, 32, 64), 2), (None, (64, 32, 64), 4),
        (None, (64, 32, 128), 2), (None, (64, 64, 64), 2), (None, (64, 64, 64), 4),
        (None, (64, 64, 128), 2), (None, (32, 32, 64), 2), (None, (64, 16, 64), 2),
        (None, (128, 32, 64), 2), (None, (128, 64, 64), 4),
        ((64, 64, 64), (64, 32, 64), 0), ((128, 64, 64), (64, 32, 64), 0),
        ((64, 128, 64), (64, 32, 64), 0), ((32, 64, 64), (64, 32, 64), 0),
        ((64, 64, 64), (64, 32, 64), 2), ((64, 64, 64), (64, 64, 64), 4),
    ]),
    256: ((64, 16, 128), [
        (None, (64, 16, 128), 0), (None, (64, 16, 128), 2), (None, (64, 16, 128), 4),
        (None, (64, 32, 128), 2), (None, (64, 32, 128), 4), (None, (32, 16, 128), 2),
        (None, (16, 16, 128), 2), (None, (64, 16, 64), 2), (None, (32, 32, 128), 4),
        ((64, 32, 128), (64, 16, 128), 0), ((32, 32, 128), (64, 16, 128), 0),
        ((64, 32, 128), (64, 16, 128), 2),
    ]),
    64: ((16, 16, 128), [
        (None, (16, 16, 128), 0), (None, (16, 16, 128), 2), (None, (16, 16, 128), 4),
        (None, (16, 32, 128), 2), (None, (16, 32, 128), 4), (None, (16, 16, 64), 2),
        # run138 also had (None, (16, 64, 128), 8): a k step over its CTA's 64 of k, wrong sums
        ((16, 32, 128), (16, 16, 128), 0), ((16, 32, 128), (16, 16, 128), 2),
    ]),
}
HELPERS = ("_cluster_buffer", "_cluster_arrive", "_cluster_wait", "_cluster_sync",
           "_cluster_store", "_cluster_load", "_quad_slot")


def splitk_name(bm, bn, bk, s):
    return f"_p_sk_m{bm}_n{bn}_k{bk}_s{s}"


def splitk_text(bm, bn, bk, s):
    """The last layer's kernel, k split over the S CTAs of a cluster (see the docstring)."""
    ob, nt, kl = bn // s, N // bn, K // s
    if bk > kl:
        raise ValueError(f"block_k {bk} over a CTA's {kl} of k: its CTAs would sum overlapping k")
    return f'''
@triton.jit(do_not_specialize=["M"])
def {splitk_name(bm, bn, bk, s)}(x_ptr, y_ptr, w_ptr, b_ptr, M):
    base = _cluster_buffer({bm * bn * 4})
    _cluster_arrive()
    tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    rank = pid % {s}
    tile = pid // {s}
    m_tiles = tl.cdiv(M, {bm})
    group = tile // {GROUP * nt}
    first = group * {GROUP}
    rows_in_group = tl.minimum(m_tiles - first, {GROUP})
    local = tile % {GROUP * nt}
    row0 = (first + local % rows_in_group).to(tl.int64) * {bm}
    col0 = (local // rows_in_group) * {bn}
    lrow = tl.arange(0, {bm})
    lcol = tl.arange(0, {bn})
    rows = row0 + lrow
    cols = col0 + lcol
    kbase = rank * {kl}
    acc = tl.zeros(({bm}, {bn}), dtype=tl.float32)
    for k0 in range(0, {kl}, {bk}):
        ks = kbase + k0 + tl.arange(0, {bk})
        a = tl.load(x_ptr + rows[:, None] * {K} + ks[None, :], mask=rows[:, None] < M, other=0.0)
        w = tl.load(w_ptr + cols[:, None] * {K} + ks[None, :])
        acc = tl.dot(a, tl.trans(w), acc)
    dep = _cluster_wait()
    owner = (lcol // {ob})[None, :] + tl.zeros(({bm}, {bn}), dtype=tl.int32)
    ok = tl.full(({bm}, {bn}), 1, tl.int32)
    slot = rank * {bm * ob} + _quad_slot(lrow[:, None], (lcol % {ob})[None, :], {ob}) + dep
    _cluster_store(slot, base, owner, ok, acc)
    dep = _cluster_sync()
    rr = tl.arange(0, {bm // 2})[:, None, None, None]
    jq = tl.arange(0, {max(ob // 2, 1)})[None, :, None, None]
    hi = tl.arange(0, 2)[None, None, :, None]
    lo = tl.arange(0, 2)[None, None, None, :]
    out_rows = row0 + (rr // 8) * 16 + hi * 8 + rr % 8
    out_cols = col0 + rank * {ob} + jq * 2 + lo
    ranks = tl.arange(0, {s})[:, None, None, None, None]
    word = ((rr * {max(ob // 2, 1)} + jq) * 4 + hi * 2 + lo)[None, :, :, :, :]
    out = tl.sum(_cluster_load(ranks * {bm * ob} + word + dep, base), axis=0)
    out += tl.load(b_ptr + out_cols).to(tl.float32)
    tl.store(y_ptr + out_rows * {N} + out_cols, out.to(tl.float16), mask=out_rows < M)
'''


def label(l0, l1, s):
    head = "" if l0 is None else f"l0 m{l0[0]}n{l0[1]}k{l0[2]} + "
    return head + ("base" if not s else f"sk{s}") + f" m{l1[0]}n{l1[1]}k{l1[2]}"


_CLUSTER_COMPILED = {}  # (kernel, pdl, 16-byte alignment of the tensors) -> compiled kernel


def cluster_kernel(mod, kernel, grid, args, s, buffer, pdl=True):
    """compile_cluster_pdl once per kernel, PDL and alignment, shared by every variant (triton
    hands the same compiled object back to a second warmup: run138 refused 7 variants so)."""
    key = (kernel, pdl, *(a.data_ptr() % 16 == 0 for a in args[:4]))
    if key not in _CLUSTER_COMPILED:
        _CLUSTER_COMPILED[key] = compile_cluster_pdl(mod, kernel, grid, args, s, buffer, pdl)
    return _CLUSTER_COMPILED[key]


def compile_cluster_pdl(mod, kernel, grid, args, s, buffer, pdl=True):
    """The kernel compiled with PDL (or without), its launch metadata set to S CTAs a cluster
    and triton's shared memory plus the receive buffer (the module's _cluster_compiled, with
    launch_pdl)."""
    c = kernel.warmup(*args, grid=grid, num_warps=4, num_stages=3, launch_pdl=pdl)
    getattr(c, "_init_handles", lambda: None)()
    meta = c.packed_metadata
    assert isinstance(meta, tuple) and len(meta) == 3 and meta[1] == 1, meta
    shared = (meta[2] + 15) // 16 * 16 + buffer
    if shared > 48 * 1024:
        mod._opt_in_shared(kernel, c.function, shared)
    c.packed_metadata = (meta[0], s, shared)
    return c


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(SRC)[0]
    tiles0 = set()
    for l0ship, variants in CASES.values():
        tiles0.add(l0ship)
        for l0, l1, s in variants:
            tiles0.add(l0 or l0ship)
            if not s:
                tiles0.add(l1)
    chains = {t: KernelConfig("chain", block_m=t[0], block_n=t[1], block_k=t[2], num_warps=4,
                              num_stages=3) for t in tiles0}
    table = {i: entry(c) for i, c in enumerate(chains.values(), 1)}
    table[len(table) + 1] = entry(KernelConfig("cluster", block_m=16, chunk=32, block_k=128,
                                               num_warps=4))  # the cluster helpers
    path = out / "probe_chain.py"
    path.write_text(render(spec, {"test": table}, {}))
    mod = load_module(path)
    mod.gpu_key(torch.device("cuda"))
    assert mod._PDL[0], "PDL is off on this GPU/triton"
    lines = ["import triton", "import triton.language as tl", ""]
    names = set()
    for _, variants in CASES.values():
        for _, l1, s in variants:
            if s and splitk_name(*l1, s) not in names:
                names.add(splitk_name(*l1, s))
                lines.append(splitk_text(*l1, s))
    kpath = out / "probe_kernels.py"
    kpath.write_text("\n".join(lines) + "\n")
    sp = importlib.util.spec_from_file_location("probe_kernels", kpath)
    km = importlib.util.module_from_spec(sp)
    km.__dict__.update({n: getattr(mod, n) for n in HELPERS})
    sp.loader.exec_module(km)
    report = []

    def say(s):
        report.append(s)
        print(s, flush=True)

    def runner(l0tile, l1, s):
        k0 = mod.KERNELS[chains[l0tile].kernel_name + "_l0"]
        if not s:
            k1 = mod.KERNELS[chains[l1].kernel_name + "_l1"]
        else:
            k1 = getattr(km, splitk_name(*l1, s))

        def run(x, w, b, out=None, h=None):
            m = x.shape[0]
            h = h if h is not None else x.new_empty((m, HID))
            y = out if out is not None else x.new_empty((m, N))
            g0 = (triton.cdiv(m, l0tile[0]) * (HID // l0tile[1]), 1)
            mod._run(k0, g0, [x, h, w[0], b[0], m], 4, 3, mod._LAYER_TENSORS)
            g1 = (triton.cdiv(m, l1[0]) * (N // l1[1]), 1)
            args = [h, y, w[1], b[1], m]
            if not s:
                mod._run(k1, g1, args, 4, 3, mod._LAYER_TENSORS, pdl=True)
                return y
            c = cluster_kernel(mod, k1, g1, args, s, l1[0] * l1[1] * 4)
            stream = torch._C._cuda_getCurrentRawStream(x.get_device())
            c.run(g1[0], 1, 1, stream, c.function, c.packed_metadata, None, None, None, *args)
            return y
        return run

    for rows, (l0ship, variants) in CASES.items():
        fns = {}
        for l0, l1, s in variants:
            name = label(l0, l1, s)
            run = runner(l0 or l0ship, l1, s)
            try:
                for m in (rows, rows + 13, 37):
                    for seed in range(2):
                        err, why = check(run, spec, m, "cuda", seed)
                        assert not why, (name, m, why)
            except Exception as e:  # a variant that fails is reported, not timed
                say(f"{rows} rows: {name}: FAILED {type(e).__name__}: {str(e)[:300]}")
                continue
            x, w, b = device_problem(spec, rows, "cuda", 0)
            y = torch.empty(rows, N, device="cuda", dtype=x.dtype)
            h = torch.empty(rows, HID, device="cuda", dtype=x.dtype)
            fns[name] = lambda run=run, x=x, w=w, b=b, y=y, h=h: run(x, w, b, out=y, h=h)
        say(f"checked {rows} rows: {len(fns)} variants ok (shipped layer 0: m{l0ship[0]}n{l0ship[1]}k{l0ship[2]})")
        times = alternate(fns)
        base = times[next(iter(fns))][0]
        say(f"{rows} rows: {'variant':>36} {'gpu':>7} {'/base':>6} {'graph':>7}")
        for k, (g, graph) in times.items():
            say(f"{'':>10}{k:>36} {g:7.2f} {g / base:6.3f} {graph:7.2f}")
    (out / "splitk.txt").write_text("\n".join(report) + "\n")


def alternate(fns, rounds=5):
    """{name: (GPU us, graph replay us)}: medians over rounds of every variant in turn."""
    t = {k: ([], []) for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            t[k][0].append(gpu_us(fn))
            t[k][1].append(replay(fn))
    return {k: (statistics.median(g), statistics.median(r)) for k, (g, r) in t.items()}


def why(out: Path) -> None:
    """SPLITK_PROBE=why: at 1024 rows, the split kernels without PDL (a plain cluster launch
    after layer 0; its griddepcontrol.wait is then a no-op) and the last layer alone (its input
    left from a full call), beside the shipped chain kernel the same ways. The base kernel
    compiled without PDL is a kernel of its own (the module's is compiled with it), so it is
    rendered from a second module."""
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(SRC)[0]
    tiles = [(64, 32, 64), (32, 32, 64)]
    chains = {t: KernelConfig("chain", block_m=t[0], block_n=t[1], block_k=t[2], num_warps=4,
                              num_stages=3) for t in tiles}
    table = {i: entry(c) for i, c in enumerate(chains.values(), 1)}
    table[len(table) + 1] = entry(KernelConfig("cluster", block_m=16, chunk=32, block_k=128,
                                               num_warps=4))
    mods = []
    for name in ("probe_chain.py", "probe_chain_plain.py"):
        (out / name).write_text(render(spec, {"test": table}, {}))
        mods.append(load_module(out / name))
    mod, plain = mods
    for m in mods:
        m.gpu_key(torch.device("cuda"))
    lines = ["import triton", "import triton.language as tl", ""]
    for l1 in tiles:
        lines.append(splitk_text(*l1, 2))
    kpath = out / "why_kernels.py"
    kpath.write_text("\n".join(lines) + "\n")
    rows, l0 = 1024, (64, 32, 64)
    x, w, b = device_problem(spec, rows, "cuda", 0)
    y = torch.empty(rows, N, device="cuda", dtype=x.dtype)
    h = torch.empty(rows, HID, device="cuda", dtype=x.dtype)
    fns = {}
    for pdl in (True, False):
        sp = importlib.util.spec_from_file_location(f"why_kernels_{int(pdl)}", kpath)
        km = importlib.util.module_from_spec(sp)
        km.__dict__.update({n: getattr(mod, n) for n in HELPERS})
        sp.loader.exec_module(km)
        owner = mod if pdl else plain
        for l1 in tiles:
            for s in (0, 2):
                if s == 0 and l1 != l0:
                    continue
                k0 = owner.KERNELS[chains[l0].kernel_name + "_l0"]
                k1 = owner.KERNELS[chains[l1].kernel_name + "_l1"] if not s else getattr(km, splitk_name(*l1, s))
                def run(x, w, b, out=None, hh=None, alone=False, k0=k0, k1=k1, l1=l1, s=s,
                        pdl=pdl, owner=owner):
                    m = x.shape[0]
                    hh = hh if hh is not None else x.new_empty((m, HID))
                    yy = out if out is not None else x.new_empty((m, N))
                    if not alone:
                        g0 = (triton.cdiv(m, l0[0]) * (HID // l0[1]), 1)
                        owner._run(k0, g0, [x, hh, w[0], b[0], m], 4, 3, owner._LAYER_TENSORS)
                    g1 = (triton.cdiv(m, l1[0]) * (N // l1[1]), 1)
                    args = [hh, yy, w[1], b[1], m]
                    if not s:
                        owner._run(k1, g1, args, 4, 3, owner._LAYER_TENSORS, pdl=pdl)
                        return yy
                    c = cluster_kernel(mod, k1, g1, args, s, l1[0] * l1[1] * 4, pdl)
                    stream = torch._C._cuda_getCurrentRawStream(x.get_device())
                    c.run(g1[0], 1, 1, stream, c.function, c.packed_metadata, None, None, None, *args)
                    return yy
                tag = ("base" if not s else f"sk{s}") + f" m{l1[0]}n{l1[1]}k{l1[2]}" + ("" if pdl else " no PDL")
                for mm in (rows, rows + 13, 37):
                    err, bad = check(run, spec, mm, "cuda", 0)
                    assert not bad, (tag, mm, bad)
                fns[tag] = lambda run=run: run(x, w, b, out=y, hh=h)
                fns[tag + ", last layer alone"] = lambda run=run: run(x, w, b, out=y, hh=h, alone=True)
    times = alternate(fns)
    report = [f"{rows} rows (layer 0: chain m{l0[0]}n{l0[1]}k{l0[2]}): {'variant':>40} {'gpu':>7} {'graph':>7}"]
    for k, (g, graph) in times.items():
        report.append(f"{'':>10}{k:>60} {g:7.2f} {graph:7.2f}")
    print("\n".join(report), flush=True)
    (out / "why.txt").write_text("\n".join(report) + "\n")


if __name__ == "__main__":
    import os

    (why if os.environ.get("SPLITK_PROBE") == "why" else main)(Path(sys.argv[1]))
