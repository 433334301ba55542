"""Session 14 probe: split's hand-over through a thread-block cluster's distributed shared memory.

split (the headline's call kernel at 1-256 rows) gives each of 16 programs a 32-column slice of
the hidden layer; each adds its partial outputs (rows x 256, fp32) into an L2 workspace with
relaxed atomics and counts its arrival with an acq_rel atomic, and the last program of a row
block reads the sums back and writes y. run57 (session 9): that counter and the last program's
reduction cost 1.5 of the kernel's 4.6 us at batch 1; a cluster barrier alone costs ~0.5-0.75
(run67). Session 10 handed the *hidden* layer over through DSMEM (every CTA's slice broadcast to
every CTA: 16x the data; 4.98 us at best, run68). Here the CTAs of one cluster are split's
programs of one row block and hand over the *partial outputs* instead, each column to the CTA
that owns it (N / CTAS columns per CTA), so each value crosses once:

- mode 0 (slots): CTA r stores its partial (i, c) into owner q = c // BN's shared memory, slot
  r (st.shared::cluster after mapa); after the cluster barrier (release / acquire) each owner
  sums its CTAS slots in a fixed order (deterministic), adds the bias and writes its columns.
- mode 2 (slots2, run102): mode 0 with two adjacent values per st.shared::cluster.v2.f32, and
  the buffer found from %dynamic_smem_size (no offset argument: what a generated kernel needs).
- mode 1 (red): the owner zeroes one BM x BN fp32 buffer before the first barrier; CTAs add
  into it with red.shared::cluster.add.f32.

A first barrier (arrive at the start, wait just before the remote stores) makes sure every CTA
of the cluster runs before its shared memory is written. The receive buffer lies past triton's
own shared memory (the launch asks for triton's size plus the buffer; the kernel gets triton's
size as an offset into `global_smem`), as in session 10's dsmem_probe. Launched through triton's
own launcher with the cluster size in the packed metadata (session 10's `Layout`).

Checked against the fp32 reference (measure.check: NaN-poisoned output, rows past M untouched)
at 1, 16, 37, 64 rows (and 1000 for block_m >= 32), 3 seeds (run102: 1, 2, 16, 37, 64); then GPU us per call
(measure.gpu_us: CUDA graph of 20 calls) beside the shipped call and graph kernels, medians of 5
alternating rounds; and what `mlpgen bench` calls "under a CUDA graph": one call captured,
replayed 200 times, wall time per replay, against eager's three kernels captured the same way.
Run from the repository root: python3 docs/h200/s14/dsred_probe.py OUT"""

import ctypes
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from mlpgen.emit import read_module
from mlpgen.selfcheck import load_module

SRC = Path("tuned/mlp_256x512x256_gelu_fp16.py")
H200 = "NVIDIA H200|sm90|132"
MOD = load_module(SRC)
_gelu_f16 = MOD._gelu_f16
K, H, N = 256, 512, 256
LOG = []


def say(line=""):
    print(line, flush=True)
    LOG.append(line)


@triton.jit
def _arrive():
    return tl.inline_asm_elementwise(
        "barrier.cluster.arrive.release.aligned;\n\tmov.u32 $0, 0;", "=r", [],
        dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _wait():
    return tl.inline_asm_elementwise(
        "barrier.cluster.wait.acquire.aligned;\n\tmov.u32 $0, 0;", "=r", [],
        dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _sync():
    return tl.inline_asm_elementwise(
        "barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;\n\t"
        "mov.u32 $0, 0;", "=r", [], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _st_remote(idx, off, rank, ok, v):
    """fp32 v to byte global_smem + off + 4 * idx of cluster CTA `rank`, where ok != 0."""
    return tl.inline_asm_elementwise(
        "{ .reg .u32 a, ra; .reg .pred p; setp.ne.u32 p, $4, 0; mov.u32 a, global_smem;"
        " add.u32 a, a, $2; mad.lo.u32 a, $1, 4, a; mapa.shared::cluster.u32 ra, a, $3;"
        " @p st.shared::cluster.f32 [ra], $5; mov.u32 $0, 0; }",
        "=r,r,r,r,r,f", [idx, off, rank, ok, v], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _red_remote(idx, off, rank, ok, v):
    """fp32 v added to byte global_smem + off + 4 * idx of cluster CTA `rank`, where ok != 0."""
    return tl.inline_asm_elementwise(
        "{ .reg .u32 a, ra; .reg .pred p; setp.ne.u32 p, $4, 0; mov.u32 a, global_smem;"
        " add.u32 a, a, $2; mad.lo.u32 a, $1, 4, a; mapa.shared::cluster.u32 ra, a, $3;"
        " @p red.shared::cluster.add.f32 [ra], $5; mov.u32 $0, 0; }",
        "=r,r,r,r,r,f", [idx, off, rank, ok, v], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _st_remote2(idx, off, rank, ok, v):
    """_st_remote two elements at a time (pack=2): one st.shared::cluster.v2.f32 where the
    pair is adjacent in the buffer (same owner, both stored, 8-byte aligned), else two scalar
    stores; correct whatever pairs triton's layout hands the asm."""
    return tl.inline_asm_elementwise(
        "{ .reg .u32 a, b, ra, rb, d; .reg .pred p0, p1, adj, s0, s1;"
        " setp.ne.u32 p0, $8, 0; setp.ne.u32 p1, $9, 0;"
        " mov.u32 a, global_smem; add.u32 a, a, $4; mad.lo.u32 a, $2, 4, a;"
        " mapa.shared::cluster.u32 ra, a, $6;"
        " mov.u32 b, global_smem; add.u32 b, b, $5; mad.lo.u32 b, $3, 4, b;"
        " mapa.shared::cluster.u32 rb, b, $7;"
        " sub.u32 d, $3, $2; setp.eq.u32 adj, d, 1; and.pred adj, adj, p0; and.pred adj, adj, p1;"
        " setp.eq.and.u32 adj, $6, $7, adj; and.b32 d, $2, 1; setp.eq.and.u32 adj, d, 0, adj;"
        " @adj st.shared::cluster.v2.f32 [ra], {$10, $11};"
        " not.pred s0, adj; and.pred s1, s0, p1; and.pred s0, s0, p0;"
        " @s0 st.shared::cluster.f32 [ra], $10; @s1 st.shared::cluster.f32 [rb], $11;"
        " mov.u32 $0, 0; mov.u32 $1, 0; }",
        "=r,=r,r,r,r,r,r,r,r,r,f,f", [idx, off, rank, ok, v], dtype=tl.int32, is_pure=False,
        pack=2)


@triton.jit
def _dyn_smem():
    return tl.inline_asm_elementwise(
        "mov.u32 $0, %dynamic_smem_size;", "=r", [], dtype=tl.int32, is_pure=True, pack=1)


@triton.jit
def _st_local(idx, off, v):
    return tl.inline_asm_elementwise(
        "{ .reg .u32 a; mov.u32 a, global_smem; add.u32 a, a, $2; mad.lo.u32 a, $1, 4, a;"
        " st.shared.f32 [a], $3; mov.u32 $0, 0; }",
        "=r,r,r,f", [idx, off, v], dtype=tl.int32, is_pure=False, pack=1)


@triton.jit
def _ld_local(idx, off):
    return tl.inline_asm_elementwise(
        "{ .reg .u32 a; mov.u32 a, global_smem; add.u32 a, a, $2; mad.lo.u32 a, $1, 4, a;"
        " ld.shared.f32 $0, [a]; }",
        "=f,r,r", [idx, off], dtype=tl.float32, is_pure=False, pack=1)


@triton.jit(do_not_specialize=["M", "off"])
def dsred(x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, M, off,
          BM: tl.constexpr, CH: tl.constexpr, BK: tl.constexpr, CTAS: tl.constexpr,
          MODE: tl.constexpr):
    BN: tl.constexpr = 256 // CTAS
    if MODE == 2:  # the buffer is the launch's last bytes: no offset argument needed
        off = _dyn_smem() - CTAS * BM * BN * 4
    pid = tl.program_id(0)
    rank = pid % CTAS
    local = tl.arange(0, BM)
    rows = (pid // CTAS).to(tl.int64) * BM + local
    row_ok = rows[:, None] < M
    mine = tl.arange(0, BN)
    if MODE == 1:  # zero this CTA's receive buffer before anyone may add into it
        zi = local[:, None] * BN + mine[None, :]
        _st_local(zi, off, tl.zeros((BM, BN), dtype=tl.float32))
    _arrive()
    hid = rank * CH + tl.arange(0, CH)
    s = tl.zeros((BM, CH), dtype=tl.float32)
    for k0 in tl.static_range(0, 256, BK):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(x_ptr + rows[:, None] * 256 + ks[None, :], mask=row_ok, other=0.0)
        w = tl.load(w0_ptr + hid[:, None] * 256 + ks[None, :])
        s = tl.dot(a, tl.trans(w), s)
    s += tl.load(b0_ptr + hid).to(tl.float32)[None, :]
    h = _gelu_f16(s)
    ns = tl.arange(0, 256)
    w = tl.load(w1_ptr + ns[:, None] * 512 + hid[None, :])
    p = tl.dot(h, tl.trans(w))
    bias = tl.load(b1_ptr + rank * BN + mine).to(tl.float32)
    dep = _wait()
    owner = (ns // BN)[None, :] + tl.zeros((BM, 256), dtype=tl.int32)
    ok = (row_ok & (owner >= 0)).to(tl.int32)
    if MODE == 0:
        idx = (rank * BM + local[:, None]) * BN + (ns % BN)[None, :] + dep
        _st_remote(idx, off, owner, ok, p)
    elif MODE == 2:
        idx = (rank * BM + local[:, None]) * BN + (ns % BN)[None, :] + dep
        _st_remote2(idx, off, owner, ok, p)
    else:
        idx = local[:, None] * BN + (ns % BN)[None, :] + dep
        _red_remote(idx, off, owner, ok, p)
    dep = _sync()
    if MODE != 1:
        slots = tl.arange(0, CTAS)
        idx3 = ((slots[:, None, None] * BM + local[None, :, None]) * BN + mine[None, None, :]
                + dep)
        out = tl.sum(_ld_local(idx3, off), axis=0)
    else:
        out = _ld_local(local[:, None] * BN + mine[None, :] + dep, off)
    out += bias[None, :]
    cols = rank * BN + mine
    tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], out.to(tl.float16), mask=row_ok)


class Dsred:
    """One config, launched as clusters of CTAS CTAs (grid x counts clusters on triton 3.6,
    session 10's Layout; checked again here by the first launch's result)."""

    def __init__(self, bm, ch, bk, mode, warps):
        self.bm, self.ch, self.bk, self.mode, self.warps = bm, ch, bk, mode, warps
        self.ctas = H // ch
        self.compiled = None

    def name(self):
        kind = {0: "slots", 1: "red", 2: "slots2"}[self.mode]
        return f"m{self.bm}_c{self.ch}_k{self.bk}_{kind}_w{self.warps}"

    def buffer_bytes(self):
        bn = N // self.ctas
        return (self.ctas if self.mode != 1 else 1) * self.bm * bn * 4

    def __call__(self, x, w, b, out=None):
        m = x.shape[0]
        y = out if out is not None else torch.empty(m, N, dtype=x.dtype, device=x.device)
        args = (x, y, w[0], b[0], w[1], b[1], m)
        consts = (self.bm, self.ch, self.bk, self.ctas, self.mode)
        if self.compiled is None:
            c = dsred.warmup(*args, 0, BM=self.bm, CH=self.ch, BK=self.bk, CTAS=self.ctas,
                             MODE=self.mode, num_warps=self.warps, num_stages=1, grid=(1,))
            c._init_handles()
            off = (c.metadata.shared + 15) // 16 * 16  # mode 2 finds it itself
            total = off + self.buffer_bytes()
            if total > 48 * 1024:  # triton opts in past 48 KiB only for its own size
                cuda = ctypes.CDLL("libcuda.so.1")
                rc = cuda.cuFuncSetAttribute(ctypes.c_void_p(c.function), 8, ctypes.c_int(total))
                assert rc == 0, f"cuFuncSetAttribute -> {rc}"
            meta = list(c.packed_metadata)
            meta[1] = self.ctas
            meta[2] = total
            if len(meta) == 6:
                meta[3:6] = [self.ctas, 1, 1]
            self.compiled = (c, off, tuple(meta))
            say(f"  {self.name()}: triton shared {c.metadata.shared} B, launched with {total},"
                f" {c.n_regs} regs, {c.n_spills} spills")
        c, off, meta = self.compiled
        stream = torch.cuda.current_stream().cuda_stream
        c.run(triton.cdiv(m, self.bm), 1, 1, stream, c.function, meta, None, None, None,
              *args, off, *consts)
        return y


def configs():
    # run101: mode 1 (red) 2.7-4x slower than mode 0 everywhere, taller row tiles slower
    return [Dsred(16, ch, 128, mode, warps) for mode in (0, 2)
            for ch, warps in ((32, 4), (32, 2), (64, 4), (64, 8))]


def replay_us(fn, reps=200):
    """Per-call wall time of one captured call replayed reps times (as bench's graph rows)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    for _ in range(20):
        g.replay()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        g.replay()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / reps * 1e6


def main(out: Path) -> None:
    from mlpgen.measure import check, device_problem, gpu_us

    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(SRC)[0]
    say(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
    good = []
    for cfg in configs():
        ms = (1, 2, 16, 37, 64) + ((1000,) if cfg.bm >= 32 else ())
        try:
            whys = [check(cfg, spec, m, "cuda", s)[1] for m in ms for s in range(3)]
        except Exception as e:  # noqa: BLE001
            whys = [f"{type(e).__name__}: {str(e)[:300]}"]
        bad = [w for w in whys if w]
        say(f"check {cfg.name()}: " + ("ok" if not bad else "FAIL " + bad[0]))
        if not bad:
            good.append(cfg)
    cells = MOD.TUNED[H200]

    def eager(x, w, b):
        return F.linear(F.gelu(F.linear(x, w[0], b[0])), w[1], b[1])

    say()
    say("GPU us per call (CUDA graph of 20 calls), medians of 5 alternating rounds")
    for m in (1, 2, 16, 64):
        x, w, b = device_problem(spec, m, "cuda", 2)
        cell = cells[min(b for b in cells if b >= m)]
        gcell = {k[6:]: v for k, v in cell.items() if k.startswith("graph_")} or cell
        runs = {f"call:{cell['kernel'][3:]}": lambda c=cell: MOD._launch(x, w, b, c),
                f"graph:{gcell['kernel'][3:]}": lambda c=gcell: MOD._launch(x, w, b, c),
                "eager": lambda: eager(x, w, b)}
        ys = {}
        for cfg in good:
            if cfg.bm <= max(16, m):
                ys[cfg.name()] = torch.empty(m, N, dtype=x.dtype, device="cuda")
                runs[cfg.name()] = lambda cfg=cfg, y=ys[cfg.name()]: cfg(x, w, b, y)
        times = {k: [] for k in runs}
        for _ in range(5):
            for k, fn in runs.items():
                times[k].append(gpu_us(fn))
        med = sorted(((statistics.median(v), k) for k, v in times.items()))
        say(f"rows {m}: " + "  ".join(f"{k} {t:.2f}" for t, k in med))
    say()
    say("one call captured, replayed 200x: wall us per replay, medians of 5 alternating rounds")
    for m in (1, 2, 16):
        x, w, b = device_problem(spec, m, "cuda", 2)
        cell = cells[min(b for b in cells if b >= m)]
        gcell = {k[6:]: v for k, v in cell.items() if k.startswith("graph_")} or cell
        best = [c for c in good if c.bm == 16]
        runs = {"eager": lambda: eager(x, w, b),
                f"graph:{gcell['kernel'][3:]}": lambda c=gcell: MOD._launch(x, w, b, c),
                f"call:{cell['kernel'][3:]}": lambda c=cell: MOD._launch(x, w, b, c)}
        for cfg in best:
            y = torch.empty(m, N, dtype=x.dtype, device="cuda")
            runs[cfg.name()] = lambda cfg=cfg, y=y: cfg(x, w, b, y)
        times = {k: [] for k in runs}
        for _ in range(5):
            for k, fn in runs.items():
                times[k].append(replay_us(fn))
        e = statistics.median(times["eager"])
        say(f"rows {m}: " + "  ".join(
            f"{k} {statistics.median(v):.2f} ({statistics.median(v) / e:.2f}x)"
            for k, v in times.items()))
    (out / "dsred_probe.log").write_text("\n".join(LOG) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
