"""Session 17 probe: chain with per-row-block flags instead of layer 2's griddepcontrol.wait.

chain's last layer waits (griddepcontrol.wait) until the whole first-layer grid has finished
and flushed. Here each first-layer program, after storing its hidden tile, adds 1 to its row
block's counter (bar.sync, then a release atomic); each last-layer program (launched by PDL,
so only once every first-layer program is resident: no deadlock) spins on its row block's
counter with acquire atomics until all of that row block's first-layer tiles are in, loads the
hidden rows past L1 (.cg), and counts itself in; the last one resets the counter to 0 for the
next call. griddepcontrol.wait stays, at the end (a no-op by then). Same tile in both layers
but for the counters' row blocks. Checked against the fp32 reference (NaN-poisoned output,
rows past M untouched) at the timed M, M+13 and 37, 3 seeds, then 20 calls in a row checked
(the counters reset); GPU us per call as the tuner measures it (measure.gpu_us: CUDA graph of
20 calls) and one call in a CUDA graph replayed 200 times, variants alternating, medians of 5.
Run from the repository root: python3 docs/h200/s17/flags_probe.py OUT"""

import importlib.util
import statistics
import sys
from pathlib import Path

import torch
import triton

sys.path.insert(0, str(Path(__file__).parent))
from prefetch_probe import GROUP, replay  # noqa: E402

from mlpgen.emit import entry, read_module, render  # noqa: E402
from mlpgen.measure import check, device_problem, gpu_us  # noqa: E402
from mlpgen.selfcheck import load_module  # noqa: E402
from mlpgen.spec import KernelConfig  # noqa: E402

SRC = Path("tuned/mlp_256x512x256_gelu_fp16.py")
WIDTHS = (256, 512, 256)
# rows -> [(form, layer-0 tile (m, n, k), layer-1 tile (m, n, k), warps)]
CASES = {
    1024: [("base", (64, 32, 64), (64, 32, 64), 4), ("flags", (64, 32, 64), (64, 32, 64), 4),
           ("flags", (64, 32, 64), (64, 16, 64), 4), ("flags", (64, 32, 128), (64, 32, 128), 4),
           ("flags", (32, 32, 64), (32, 32, 64), 4), ("flags", (64, 64, 64), (64, 32, 64), 4)],
    256: [("base", (64, 16, 128), (64, 16, 128), 4), ("flags", (64, 16, 128), (64, 16, 128), 4),
          ("flags", (32, 16, 128), (32, 16, 128), 4), ("flags", (16, 32, 128), (16, 32, 128), 4),
          ("flags", (32, 32, 128), (32, 16, 128), 4)],
}


def tile_text(layer, bm, bn, bk, act, cg):
    k, n = WIDTHS[layer], WIDTHS[layer + 1]
    load = ", cache_modifier='.cg'" if cg else ""
    out = "_gelu_f16(acc)" if act else "acc.to(tl.float16)"
    return [
        f"    m_tiles = tl.cdiv(M, {bm})",
        f"    group = pid // {GROUP * (n // bn)}",
        f"    first = group * {GROUP}",
        f"    rows_in_group = tl.minimum(m_tiles - first, {GROUP})",
        f"    local = pid % {GROUP * (n // bn)}",
        "    rb = first + local % rows_in_group",
        f"    rows = (rb * {bm} + tl.arange(0, {bm})).to(tl.int64)",
        f"    cols = (local // rows_in_group) * {bn} + tl.arange(0, {bn})",
        "    WAIT",
        f"    acc = tl.zeros(({bm}, {bn}), dtype=tl.float32)",
        f"    for k0 in range(0, {k}, {bk}):",
        f"        ks = k0 + tl.arange(0, {bk})",
        f"        a = tl.load(x_ptr + rows[:, None] * {k} + ks[None, :], mask=rows[:, None] < M, other=0.0{load})",
        f"        w = tl.load(w_ptr + cols[:, None] * {k} + ks[None, :])",
        "        acc = tl.dot(a, tl.trans(w), acc)",
        "    acc += tl.load(b_ptr + cols).to(tl.float32)[None, :]",
        f"    tl.store(y_ptr + rows[:, None] * {n} + cols[None, :], {out}, mask=rows[:, None] < M)",
    ]


def kernels_text(name, t0, t1):
    n0_tiles = WIDTHS[1] // t0[1]
    n1_tiles = WIDTHS[2] // t1[1]
    l0 = ["@triton.jit(do_not_specialize=['M'])",
          f"def {name}_l0(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):",
          "    tl.extra.cuda.gdc_launch_dependents()",
          "    pid = tl.program_id(0)"]
    l0 += [s for s in tile_text(0, *t0, act=True, cg=False) if "WAIT" not in s]
    l0 += ["    tl.debug_barrier()",
           "    tl.atomic_add(flag_ptr + rb, 1, sem='release')"]
    wait = [f"    while tl.atomic_add(flag_ptr + rb, 0, sem='acquire') < {n0_tiles}:",
            "        pass",
            "    tl.debug_barrier()",
            f"    if tl.atomic_add(flag_ptr + rb, 1, sem='relaxed') == {n0_tiles + n1_tiles - 1}:",
            "        tl.atomic_xchg(flag_ptr + rb, 0)"]
    l1 = ["@triton.jit(do_not_specialize=['M'])",
          f"def {name}_l1(x_ptr, y_ptr, w_ptr, b_ptr, flag_ptr, M):",
          "    pid = tl.program_id(0)"]
    for s in tile_text(1, *t1, act=False, cg=True):
        l1 += wait if "WAIT" in s else [s]
    l1 += ["    tl.extra.cuda.gdc_wait()"]
    return "\n".join(l0) + "\n\n\n" + "\n".join(l1) + "\n"


def label(form, t0, t1, w):
    return f"{form} {t0[0]}x{t0[1]}k{t0[2]}/{t1[0]}x{t1[1]}k{t1[2]}w{w}"


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(SRC)[0]
    bases = {v[1]: KernelConfig("chain", block_m=v[1][0], block_n=v[1][1], block_k=v[1][2],
                                num_warps=4, num_stages=3)
             for vs in CASES.values() for v in vs if v[0] == "base"}
    path = out / "probe_chain.py"
    path.write_text(render(spec, {"test": {i: entry(c) for i, c in enumerate(bases.values(), 1)}}, {}))
    mod = load_module(path)
    mod.gpu_key(torch.device("cuda"))
    assert mod._PDL[0], "PDL is off on this GPU/triton"
    src = ["import triton", "import triton.language as tl", f"from {mod.__name__} import _gelu_f16", ""]
    names = {}
    for vs in CASES.values():
        for form, t0, t1, _ in vs:
            if form == "flags" and (t0, t1) not in names:
                names[t0, t1] = f"_f{len(names)}"
                src += ["", kernels_text(names[t0, t1], t0, t1)]
    kpath = out / "flag_kernels.py"
    kpath.write_text("\n".join(src) + "\n")
    sys.modules[mod.__name__] = mod
    sp = importlib.util.spec_from_file_location("flag_kernels", kpath)
    km = importlib.util.module_from_spec(sp)
    sp.loader.exec_module(km)
    report = []

    def say(s):
        report.append(s)
        print(s, flush=True)

    def runner(form, t0, t1, warps):
        if form == "base":
            name = bases[t0].kernel_name
            k0, k1 = mod.KERNELS[name + "_l0"], mod.KERNELS[name + "_l1"]
            extra = []
        else:
            k0, k1 = (getattr(km, f"{names[t0, t1]}_l{i}") for i in (0, 1))
            extra = [torch.zeros(4096, dtype=torch.int32, device="cuda")]

        def run(x, w, b, out=None):
            m = x.shape[0]
            h = x.new_empty((m, WIDTHS[1]))
            y = out if out is not None else x.new_empty((m, WIDTHS[2]))
            g0 = (triton.cdiv(m, t0[0]) * (WIDTHS[1] // t0[1]), 1)
            g1 = (triton.cdiv(m, t1[0]) * (WIDTHS[2] // t1[1]), 1)
            mod._run(k0, g0, [x, h, w[0], b[0], *extra, m], 4, 3, mod._LAYER_TENSORS)
            mod._run(k1, g1, [h, y, w[1], b[1], *extra, m], warps, 3, mod._LAYER_TENSORS, pdl=True)
            return y
        return run, extra

    for rows, vs in CASES.items():
        fns = {}
        for form, t0, t1, warps in vs:
            run, extra = runner(form, t0, t1, warps)
            for m in (rows, rows + 13, 37):
                for seed in range(3):
                    err, why = check(run, spec, m, "cuda", seed)
                    assert not why, (label(form, t0, t1, warps), m, why)
            x, w, b = device_problem(spec, rows, "cuda", 5)
            ref = run(x, w, b).clone()
            ys = [run(x, w, b) for _ in range(20)]
            assert all(torch.equal(y, ref) for y in ys), "repeated calls differ"
            assert not extra or not extra[0].any().item(), "counters not reset"
            y = torch.empty(rows, WIDTHS[2], device="cuda", dtype=x.dtype)
            fns[label(form, t0, t1, warps)] = lambda run=run, x=x, w=w, b=b, y=y: run(x, w, b, out=y)
        say(f"checked {rows} rows: {len(fns)} variants ok")
        t = {k: {"gpu": [], "graph": []} for k in fns}
        for _ in range(5):
            for k, fn in fns.items():
                t[k]["gpu"].append(gpu_us(fn))
                t[k]["graph"].append(replay(fn))
        base = statistics.median(t[next(iter(fns))]["gpu"])
        say(f"{rows} rows: {'variant':>30} {'gpu':>7} {'/base':>6} {'graph':>7}")
        for k in fns:
            g = statistics.median(t[k]["gpu"])
            say(f"{'':>10}{k:>30} {g:7.2f} {g / base:6.3f} {statistics.median(t[k]['graph']):7.2f}")
    (out / "flags.txt").write_text("\n".join(report) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
