"""Session 10: where run63's batch-1 cluster kernel (16 CTAs x 16 hidden columns, the second
layer's weights loaded before the barrier: 5.21 us against split's 4.52) spends its time. The
kernel of cluster_probe.py rebuilt with a constexpr STAGE that cuts it back:
  empty       nothing (launched as one cluster of 16, and as 16 plain CTAs: the cluster launch)
  barrier     the cluster barrier alone
  layer1      layer 1 (x and the weight slice loaded, dot, bias, GELU, stored)
  +barrier    layer 1, the second layer's weights loaded, the barrier
  full        + the hidden row block read back and the second layer (as run63's)
  no_barrier  full without the barrier (wrong results: timing only)
and the shipped split kernel beside them. GPU time per call (measure.gpu_us: CUDA graph of 20
calls) at 1 row, medians of 5 alternating rounds; `full` checked against the fp32 reference
first. Run from the repository root: python3 docs/h200/s10/cluster_parts_probe.py OUT"""

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
def parts_mlp(
    x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, h_ptr, M,
    K: tl.constexpr, H: tl.constexpr, N: tl.constexpr,
    BM: tl.constexpr, BN: tl.constexpr, CTAS: tl.constexpr, STAGE: tl.constexpr,
):
    # STAGE: 0 empty, 1 barrier only, 2 layer 1, 3 layer 1 + w1 + barrier, 4 full, 5 no barrier
    pid = tl.program_id(0)
    rank = pid % CTAS
    rows = (pid // CTAS).to(tl.int64) * BM + tl.arange(0, BM)
    row_ok = rows[:, None] < M
    if STAGE == 1:
        dep = _cluster_sync()
        tl.store(h_ptr + pid, dep.to(tl.float16))
    if STAGE >= 2:  # this CTA's hidden columns: H / (CTAS * BN) tiles of BN
        ks = tl.arange(0, K)
        a = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=row_ok, other=0.0)
        for n0 in range(rank * BN, H, CTAS * BN):
            hid = n0 + tl.arange(0, BN)
            w = tl.load(w0_ptr + hid[:, None] * K + ks[None, :])
            acc = tl.dot(a, tl.trans(w)) + tl.load(b0_ptr + hid).to(tl.float32)[None, :]
            tl.store(h_ptr + rows[:, None] * H + hid[None, :], _gelu(acc).to(tl.float16),
                     mask=row_ok)
    if STAGE >= 3:  # one output tile of BN per CTA (N == CTAS * BN)
        cols = rank * BN + tl.arange(0, BN)
        hs = tl.arange(0, H)
        w1 = tl.load(w1_ptr + cols[:, None] * H + hs[None, :])
        bias = tl.load(b1_ptr + cols).to(tl.float32)
        if STAGE == 5:
            dep = 0
        else:
            dep = _cluster_sync()
        if STAGE == 3:
            tl.store(y_ptr + rows[:, None] * N + cols[None, :], (bias[None, :] + dep).to(tl.float16),
                     mask=row_ok)
        else:
            a = tl.load(h_ptr + dep + rows[:, None] * H + hs[None, :], mask=row_ok, other=0.0,
                        cache_modifier=".cg")
            acc = tl.dot(a, tl.trans(w1)) + bias[None, :]
            tl.store(y_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16), mask=row_ok)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(cp.SRC)[0]
    lay = cp.Layout()
    assert lay.per_cluster
    K, H, N, BM, BN, C = 256, 512, 256, 16, 16, 16
    assert N == C * BN
    scratch = torch.empty(64 * H, dtype=torch.float16, device="cuda")
    compiled = {}

    def runner(stage, ctas):
        def run(x, w, b, out=None):
            m = x.shape[0]
            y = out if out is not None else torch.empty(m, N, dtype=x.dtype, device=x.device)
            args = (x, y, w[0], b[0], w[1], b[1], scratch, m)
            if stage not in compiled:
                compiled[stage] = parts_mlp[(1,)](*args, K=K, H=H, N=N, BM=BM, BN=BN, CTAS=C,
                                                  STAGE=stage, num_warps=4, num_stages=1)
            consts = (K, H, N, BM, BN, C, stage)
            if ctas == 1:  # the same CTAs, no cluster: grid x counts CTAs
                lay.launch(compiled[stage], triton.cdiv(m, BM) * C, args + consts, 1)
            else:
                lay.launch(compiled[stage], triton.cdiv(m, BM), args + consts, ctas)
            return y
        return run

    for m in (1, 37):
        err, why = check(runner(4, C), spec, m, "cuda", 3)
        assert not why, why
        cp.say(f"full checked at {m} rows: rel err {err:.2e}")
    mod = cp.MOD
    cell = mod.TUNED[cp.H200][1]
    x, w, b = device_problem(spec, 1, "cuda", 2)
    variants = {
        "empty_plain": runner(0, 1),
        "empty": runner(0, C),
        "barrier": runner(1, C),
        "layer1": runner(2, C),
        "+barrier": runner(3, C),
        "full": runner(4, C),
        "no_barrier": runner(5, C),
        "split": lambda x, w, b: mod._launch(x, w, b, cell),
    }
    times = {k: [] for k in variants}
    for _ in range(5):
        for k, f in variants.items():
            times[k].append(gpu_us(lambda f=f: f(x, w, b)))
    cp.say(" ".join(f"{k:>11}" for k in variants))
    cp.say(" ".join(f"{statistics.median(v):11.2f}" for v in times.values()))
    (out / "cluster_parts_probe.log").write_text("\n".join(cp.LOG) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
