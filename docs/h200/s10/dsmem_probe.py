"""Session 10 probe: the hidden layer handed between a cluster's CTAs through distributed shared
memory instead of L2 (run67: reading the hidden row block back from L2 cost 1.6 us of the
cluster kernel's 5.20, split's whole hand-over 1.5 of 4.5). Headline (256 -> 512 -> 256, GELU,
fp16), one cluster of CTAS CTAs per block_m rows: CTA r computes hidden columns r*CH.. (one dot),
loads its output columns' weights (r*BN.., the whole hidden width), then writes its hidden slice
into every CTA's shared memory (inline PTX: mapa + st.shared::cluster, rows past M skipped),
cluster barrier (release/acquire), reads the whole hidden row block from its own shared memory
(ld.shared) and computes its output columns. The shared buffer lies past triton's own shared
memory: the launch asks for triton's size plus block_m x H fp16, and the kernel gets triton's
size as its offset (`global_smem` is triton's dynamic shared array). A first barrier (arrive at
the start, wait before the remote stores) makes sure every CTA of the cluster runs before its
shared memory is written. Checked against the fp32 reference at 1, 16 and 13 rows (5 seeds),
then GPU time per call (measure.gpu_us: CUDA graph of 20 calls), medians of 5 alternating
rounds, beside the shipped split (call) and chain (graph) kernels, same process.
Run from the repository root: python3 docs/h200/s10/dsmem_probe.py OUT"""

import importlib.util
import statistics
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("cluster_probe", HERE / "cluster_probe.py")
cp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cp)
_gelu = cp._gelu


def _bcast_asm(ctas: int) -> str:
    """Store $4 (fp16) at byte offset $2 + 2 * $1 of global_smem in every CTA of the cluster,
    where $3 != 0; $0 = 0."""
    lines = [
        "{ .reg .u32 a, ra; .reg .pred p;",
        "setp.ne.u32 p, $3, 0;",
        "mov.u32 a, global_smem;",
        "add.u32 a, a, $2;",
        "mad.lo.u32 a, $1, 2, a;",
    ]
    for r in range(ctas):
        lines += [f"mapa.shared::cluster.u32 ra, a, {r};", "@p st.shared::cluster.b16 [ra], $4;"]
    lines += ["mov.u32 $0, 0; }"]
    return "\n\t".join(lines)


BCAST = {c: tl.constexpr(_bcast_asm(c)) for c in (4, 8, 16)}
BCAST4, BCAST8, BCAST16 = BCAST[4], BCAST[8], BCAST[16]


@triton.jit
def _arrive():
    return tl.inline_asm_elementwise(
        "barrier.cluster.arrive.relaxed.aligned;\n\tmov.u32 $0, 0;", "=r", [],
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
def _ld_smem(idx, off):
    return tl.inline_asm_elementwise(
        "{ .reg .u32 a; mov.u32 a, global_smem; add.u32 a, a, $2; mad.lo.u32 a, $1, 2, a;"
        " ld.shared.b16 $0, [a]; }", "=h,r,r", [idx, off], dtype=tl.float16, is_pure=False,
        pack=1)


@triton.jit(do_not_specialize=["M", "off"])
def dsm_mlp(
    x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, M, off,
    K: tl.constexpr, H: tl.constexpr, N: tl.constexpr,
    BM: tl.constexpr, CH: tl.constexpr, BN: tl.constexpr, CTAS: tl.constexpr,
):
    pid = tl.program_id(0)
    rank = pid % CTAS
    local = tl.arange(0, BM)
    rows = (pid // CTAS).to(tl.int64) * BM + local
    row_ok = rows[:, None] < M
    _arrive()  # this CTA runs (its shared memory may be written once every CTA has arrived)
    hid = rank * CH + tl.arange(0, CH)
    ks = tl.arange(0, K)
    a = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=row_ok, other=0.0)
    w = tl.load(w0_ptr + hid[:, None] * K + ks[None, :])
    s = tl.dot(a, tl.trans(w)) + tl.load(b0_ptr + hid).to(tl.float32)[None, :]
    h = _gelu(s).to(tl.float16)
    cols = rank * BN + tl.arange(0, BN)
    hs = tl.arange(0, H)
    w1 = tl.load(w1_ptr + cols[:, None] * H + hs[None, :])
    bias = tl.load(b1_ptr + cols).to(tl.float32)
    dep = _wait()
    idx = local[:, None] * H + hid[None, :] + dep
    ok = (row_ok & (hid[None, :] < H)).to(tl.int32)
    if CTAS == 4:
        tl.inline_asm_elementwise(BCAST4, "=r,r,r,r,h", [idx, off, ok, h], dtype=tl.int32,
                                  is_pure=False, pack=1)
    elif CTAS == 8:
        tl.inline_asm_elementwise(BCAST8, "=r,r,r,r,h", [idx, off, ok, h], dtype=tl.int32,
                                  is_pure=False, pack=1)
    else:
        tl.inline_asm_elementwise(BCAST16, "=r,r,r,r,h", [idx, off, ok, h], dtype=tl.int32,
                                  is_pure=False, pack=1)
    dep = _sync()
    hfull = _ld_smem(local[:, None] * H + hs[None, :] + dep, off)
    acc = tl.dot(hfull, tl.trans(w1)) + bias[None, :]
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16), mask=row_ok)


def configs():
    # (BM, CH, BN, CTAS, warps): H == CTAS * CH, N == CTAS * BN
    return [(16, 32, 16, 16, 4), (16, 64, 32, 8, 4), (16, 128, 64, 4, 4), (16, 32, 16, 16, 2),
            (16, 64, 32, 8, 2)]


def main(out: Path) -> None:
    from mlpgen.emit import read_module
    from mlpgen.measure import check, device_problem, gpu_us

    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(cp.SRC)[0]
    lay = cp.Layout()
    assert lay.per_cluster
    K, H, N = 256, 512, 256
    compiled = {}

    def runner(bm, ch, bn, ctas, warps):
        def run(x, w, b, out=None):
            m = x.shape[0]
            y = out if out is not None else torch.empty(m, N, dtype=x.dtype, device=x.device)
            key = (bm, ch, bn, ctas, warps)
            args = (x, y, w[0], b[0], w[1], b[1], m)
            if key not in compiled:
                c = dsm_mlp.warmup(*args, 0, K=K, H=H, N=N, BM=bm, CH=ch, BN=bn, CTAS=ctas,
                                   num_warps=warps, num_stages=1, grid=(1,))
                off = (c.metadata.shared + 15) // 16 * 16
                meta = list(c.packed_metadata)
                meta[2] = off + bm * H * 2
                compiled[key] = (c, off, tuple(meta))
                cp.say(f"  {key}: triton shared {c.metadata.shared} B, launched with {meta[2]}")
            c, off, meta = compiled[key]
            consts = (K, H, N, bm, ch, bn, ctas)
            meta = (meta[0], ctas, *meta[2:])
            stream = torch.cuda.current_stream().cuda_stream
            c.run(triton.cdiv(m, bm), 1, 1, stream, c.function, meta, None, None, None,
                  *args, off, *consts)
            return y
        return run

    good = []
    for cfg in configs():
        run = runner(*cfg)
        try:
            whys = [check(run, spec, m, "cuda", s)[1] for m in (1, 16, 13) for s in range(5)]
        except Exception as e:  # noqa: BLE001
            whys = [f"{type(e).__name__}: {str(e)[:200]}"]
        bad = [w for w in whys if w]
        cp.say(f"cfg {cfg}: " + ("ok" if not bad else "FAIL " + bad[0]))
        if not bad:
            good.append(cfg)
    mod = cp.MOD
    cp.say(f"{'rows':>5} " + " ".join(f"{str(c):>22}" for c in good) + f" {'split':>8} {'graph':>8}")
    for m in (1, 16):
        x, w, b = device_problem(spec, m, "cuda", 2)
        cell = mod.TUNED[cp.H200][m]
        gcell = {k[6:]: v for k, v in cell.items() if k.startswith("graph_")} or cell
        fns = {c: (lambda r=runner(*c): r(x, w, b)) for c in good}
        fns["split"] = lambda: mod._launch(x, w, b, cell)
        fns["graph"] = lambda: mod._launch(x, w, b, gcell)
        times = {k: [] for k in fns}
        for _ in range(5):
            for k, f in fns.items():
                times[k].append(gpu_us(f))
        cp.say(f"{m:>5} " + " ".join(f"{statistics.median(v):>22.2f}" for k, v in times.items()
                                     if k in good) +
               f" {statistics.median(times['split']):8.2f} {statistics.median(times['graph']):8.2f}")
    (out / "dsmem_probe.log").write_text("\n".join(cp.LOG) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
