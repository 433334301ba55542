"""Session 14 probe: where the shipped cluster kernel's time goes at small batches. The
headline's cluster tile (16-row blocks, 16 CTAs of 32 hidden columns, 4 warps, paired remote
stores) cut back step by step, each variant the probe kernel of dsred_probe.py (mode 2, the
shipped kernel's body) with one part switched off by a constexpr (outputs of the cut-back
variants are not checked: they are timings only; the full one is):
  full         the kernel as shipped
  no_start     without the first barrier (arrive at the start, wait before the remote stores);
               unsafe: a CTA could store into one that has not started (timing only)
  no_stores    both barriers, no remote stores (each CTA sums whatever its buffer holds): not
               run, ptxas refuses what triton 3.6 makes of it ("Arguments mismatch for
               instruction 'mov'")
  compute      no barriers and no remote stores: both layers' dots, the local sum, y stored
  layer1       the first layer only (its activation's first columns stored to y)
  empty        the launch of 16-CTA clusters with nothing but y's store of zeros
beside the shipped split and cluster kernels of the module (split: the earlier winner). GPU us per
call (measure.gpu_us: CUDA graph of 20 calls), alternating, medians of 5 rounds, at 1 and 16 rows.
Run from the repository root: python3 docs/h200/s14/cluster_parts_probe.py OUT"""

import importlib.util
import statistics
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

from mlpgen.emit import entry, read_module, render
from mlpgen.measure import check, device_problem, gpu_us
from mlpgen.selfcheck import load_module
from mlpgen.spec import KernelConfig

HERE = Path(__file__).parent
_spec = importlib.util.spec_from_file_location("dsred_probe", HERE / "dsred_probe.py")
dp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dp)
_gelu_f16 = dp._gelu_f16
_arrive, _wait, _sync = dp._arrive, dp._wait, dp._sync
_st_remote2, _dyn_smem, _ld_local = dp._st_remote2, dp._dyn_smem, dp._ld_local
PARTS = ("full", "no_start", "no_stores", "compute", "layer1", "empty")
RUN = ("full", "no_start", "compute", "layer1", "empty")


@triton.jit(do_not_specialize=["M"])
def parts(x_ptr, y_ptr, w0_ptr, b0_ptr, w1_ptr, b1_ptr, M, PART: tl.constexpr):
    BM: tl.constexpr = 16
    CTAS: tl.constexpr = 16
    BN: tl.constexpr = 16
    off = _dyn_smem() - CTAS * BM * BN * 4
    pid = tl.program_id(0)
    rank = pid % CTAS
    local = tl.arange(0, BM)
    rows = (pid // CTAS).to(tl.int64) * BM + local
    row_ok = rows[:, None] < M
    mine = tl.arange(0, BN)
    cols = rank * BN + mine
    if PART == 5:
        tl.store(y_ptr + rows[:, None] * 256 + cols[None, :],
                 tl.zeros((BM, BN), dtype=tl.float16), mask=row_ok)
    else:
        if PART <= 2:
            if PART != 1:
                _arrive()
        hid = rank * 32 + tl.arange(0, 32)
        s = tl.zeros((BM, 32), dtype=tl.float32)
        for k0 in tl.static_range(0, 256, 128):
            ks = k0 + tl.arange(0, 128)
            a = tl.load(x_ptr + rows[:, None] * 256 + ks[None, :], mask=row_ok, other=0.0)
            w = tl.load(w0_ptr + hid[:, None] * 256 + ks[None, :])
            s = tl.dot(a, tl.trans(w), s)
        s += tl.load(b0_ptr + hid).to(tl.float32)[None, :]
        h = _gelu_f16(s)
        if PART == 4:
            tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], h.reshape(BM, 2, BN).max(1),
                     mask=row_ok)
        else:
            ns = tl.arange(0, 256)
            w = tl.load(w1_ptr + ns[:, None] * 512 + hid[None, :])
            p = tl.dot(h, tl.trans(w))
            bias = tl.load(b1_ptr + cols).to(tl.float32)
            dep = 0
            if PART == 0 or PART == 2:
                dep = _wait()
            owner = (ns // BN)[None, :] + tl.zeros((BM, 256), dtype=tl.int32)
            ok = (row_ok & (owner >= 0)).to(tl.int32)
            idx = (rank * BM + local[:, None]) * BN + (ns % BN)[None, :] + dep
            if PART <= 1:
                _st_remote2(idx, off, owner, ok, p)
            if PART <= 2:
                dep = _sync() + dep  # the first wait's result kept live (no_stores)
            slots = tl.arange(0, CTAS)
            idx3 = ((slots[:, None, None] * BM + local[None, :, None]) * BN + mine[None, None, :]
                    + dep)
            out = tl.sum(_ld_local(idx3, off), axis=0)
            if PART == 3:  # keep the second dot live without the hand-over
                out += tl.sum(p, axis=1)[:, None]
            out += bias[None, :]
            tl.store(y_ptr + rows[:, None] * 256 + cols[None, :], out.to(tl.float16),
                     mask=row_ok)


class Part:
    def __init__(self, part):
        self.part = PARTS.index(part)
        self.compiled = None

    def __call__(self, x, w, b, out=None):
        m = x.shape[0]
        y = out if out is not None else torch.empty(m, 256, dtype=x.dtype, device=x.device)
        args = (x, y, w[0], b[0], w[1], b[1], m)
        if self.compiled is None:
            c = parts.warmup(*args, PART=self.part, num_warps=4, num_stages=1, grid=(1,))
            c._init_handles()
            shared = (c.metadata.shared + 15) // 16 * 16 + 16 * 16 * 16 * 4
            self.compiled = (c, (c.packed_metadata[0], 16, shared))
        c, meta = self.compiled
        c.run(triton.cdiv(m, 16), 1, 1, torch.cuda.current_stream().cuda_stream, c.function,
              meta, None, None, None, *args, self.part)
        return y


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(dp.SRC)[0]
    lines = []

    def say(s):
        lines.append(s)
        print(s, flush=True)

    mods = {}
    for name, cfg in (("split", KernelConfig("split", block_m=16, chunk=32, block_n=256,
                                             block_k=128)),
                      ("cluster", KernelConfig("cluster", block_m=16, chunk=32, block_k=128))):
        path = out / f"parts_{name}.py"
        path.write_text(render(spec, {dp.H200: {1: entry(cfg)}}, {}))
        mods[name] = (load_module(path), entry(cfg))
    full = Part("full")
    whys = [check(full, spec, m, "cuda", s)[1] for m in (1, 16, 37) for s in range(3)]
    say("full checked: " + ("ok" if not any(whys) else next(w for w in whys if w)))
    say(f"{'rows':>5} " + " ".join(f"{k:>10}" for k in (*RUN, "split", "cluster")))
    for m in (1, 16):
        x, w, b = device_problem(spec, m, "cuda", 2)
        fns = {p: (lambda f=Part(p): f(x, w, b)) for p in RUN}
        for name, (mod, cell) in mods.items():
            fns[name] = lambda mod=mod, cell=cell: mod._launch(x, w, b, cell)
        t = {k: [] for k in fns}
        for _ in range(5):
            for k, fn in fns.items():
                t[k].append(gpu_us(fn))
        say(f"{m:>5} " + " ".join(f"{statistics.median(v):10.2f}" for v in t.values()))
    (out / "cluster_parts.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
