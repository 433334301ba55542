"""Session 10: run67 found the cluster kernel's layer 1 slow (2.3 us over an empty kernel
against split's 1.5: each of its 16 CTAs computed two 16-column hidden tiles in turn) and its
part after layer 1 (second layer's weights, barrier, L2 read-back, second layer) at 1.8 us,
less than split's 2.1 (run57). Here layer 1 is one dot per CTA as in split (CH hidden columns:
16 CTAs x 32, or 8 x 64), the rest as run67's `full`: the second layer's BN = N / CTAS output
columns per CTA, their weights loaded before the barrier, the hidden row block read back from
L2 past L1. Checked against the fp32 reference at 1, 37 and 16 rows, then GPU time per call
(measure.gpu_us: CUDA graph of 20 calls), medians of 5 alternating rounds beside the shipped
split and chain kernels. Run from the repository root:
python3 docs/h200/s10/cluster_tile_probe.py OUT"""

import importlib.util
import statistics
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

from mlpgen.emit import read_module
from mlpgen.measure import check, device_problem, gpu_us

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("cluster_probe", HERE / "cluster_probe.py")
cp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cp)
_gelu, _cluster_sync = cp._gelu, cp._cluster_sync


@triton.jit(do_not_specialize=["M"])
def tile_mlp(
    x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, h_ptr, M,
    K: tl.constexpr, H: tl.constexpr, N: tl.constexpr,
    BM: tl.constexpr, CH: tl.constexpr, BN: tl.constexpr, CTAS: tl.constexpr,
):
    pid = tl.program_id(0)
    rank = pid % CTAS
    rows = (pid // CTAS).to(tl.int64) * BM + tl.arange(0, BM)
    row_ok = rows[:, None] < M
    hid = rank * CH + tl.arange(0, CH)
    ks = tl.arange(0, K)
    a = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=row_ok, other=0.0)
    w = tl.load(w0_ptr + hid[:, None] * K + ks[None, :])
    s = tl.dot(a, tl.trans(w)) + tl.load(b0_ptr + hid).to(tl.float32)[None, :]
    tl.store(h_ptr + rows[:, None] * H + hid[None, :], _gelu(s).to(tl.float16), mask=row_ok)
    cols = rank * BN + tl.arange(0, BN)
    hs = tl.arange(0, H)
    w1 = tl.load(w1_ptr + cols[:, None] * H + hs[None, :])
    bias = tl.load(b1_ptr + cols).to(tl.float32)
    dep = _cluster_sync()
    h = tl.load(h_ptr + dep + rows[:, None] * H + hs[None, :], mask=row_ok, other=0.0,
                cache_modifier=".cg")
    acc = tl.dot(h, tl.trans(w1)) + bias[None, :]
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16), mask=row_ok)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(cp.SRC)[0]
    lay = cp.Layout()
    assert lay.per_cluster
    K, H, N, BM = 256, 512, 256, 16
    scratch = torch.empty(64 * H, dtype=torch.float16, device="cuda")
    compiled = {}

    def runner(ctas, warps):
        ch, bn = H // ctas, N // ctas

        def run(x, w, b, out=None):
            m = x.shape[0]
            y = out if out is not None else torch.empty(m, N, dtype=x.dtype, device=x.device)
            args = (x, y, w[0], b[0], w[1], b[1], scratch, m)
            key = (ctas, warps)
            if key not in compiled:
                compiled[key] = tile_mlp[(1,)](*args, K=K, H=H, N=N, BM=BM, CH=ch, BN=bn,
                                               CTAS=ctas, num_warps=warps, num_stages=1)
            lay.launch(compiled[key], triton.cdiv(m, BM), args + (K, H, N, BM, ch, bn, ctas), ctas)
            return y
        return run

    cfgs = [(16, 4), (16, 2), (8, 4)]
    good = []
    for c in cfgs:
        whys = [check(runner(*c), spec, m, "cuda", s)[1] for m in (1, 37, 16) for s in range(3)]
        bad = [w for w in whys if w]
        cp.say(f"cfg ctas={c[0]} warps={c[1]}: " + ("ok" if not bad else "FAIL " + bad[0]))
        if not bad:
            good.append(c)
    mod = cp.MOD
    names = [f"{c[0]}x{512 // c[0]} w{c[1]}" for c in good] + ["split", "graph"]
    cp.say(f"{'rows':>5} " + " ".join(f"{n:>12}" for n in names))
    for m in (1, 16):
        x, w, b = device_problem(spec, m, "cuda", 2)
        cell = mod.TUNED[cp.H200][m]
        gcell = {k[6:]: v for k, v in cell.items() if k.startswith("graph_")} or cell
        fns = [lambda r=runner(*c): r(x, w, b) for c in good]
        fns += [lambda: mod._launch(x, w, b, cell), lambda: mod._launch(x, w, b, gcell)]
        times = [[] for _ in fns]
        for _ in range(5):
            for i, f in enumerate(fns):
                times[i].append(gpu_us(f))
        cp.say(f"{m:>5} " + " ".join(f"{statistics.median(t):12.2f}" for t in times))
    (out / "cluster_tile_probe.log").write_text("\n".join(cp.LOG) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
