"""Session 17 probe: chain's later layers with their weight tile loaded before the PDL wait.

chain (kernel_layered.j2) launches layer l+1 while layer l runs (programmatic dependent launch);
every load of layer l+1 waits for griddepcontrol.wait, the weights' too, though only its input
is the previous layer's output. Here the last layer's kernel loads its whole weight tile
(block_n x K, a Python-unrolled k loop: one register tensor per block_k step) first, then waits,
then loads its input (all k steps, then the dots: "pre"; or each step's load beside its dot:
"inter"); "unrolled" is the same unrolled form with the wait first (a control for the unroll).
Layer 0 is the shipped chain kernel of the same module. Every variant is checked against the
fp32 reference (NaN-poisoned output, rows past M untouched) at the timed M, M+13 and 37 rows,
2 seeds; then GPU us per call as the tuner measures it (measure.gpu_us: CUDA graph of 20 calls)
and one call captured in a CUDA graph replayed 200 times, variants alternating, medians of 5.
Run from the repository root: python3 docs/h200/s17/prefetch_probe.py OUT"""

import importlib.util
import statistics
import sys
import time
from pathlib import Path

import torch
import triton

from mlpgen.emit import entry, read_module, render
from mlpgen.measure import check, device_problem, gpu_us
from mlpgen.selfcheck import load_module
from mlpgen.spec import KernelConfig

SRC = Path("tuned/mlp_256x512x256_gelu_fp16.py")
GROUP = 8  # the module's group of row tiles (kernel_layered.j2)
# rows -> (layer-0 chain tile (m, n, k), [(form, layer-1 tile (m, n, k), warps)])
CASES = {
    1024: ((64, 32, 64), [
        ("base", (64, 32, 64), 4), ("unrolled", (64, 32, 128), 4),
        ("pre", (64, 32, 128), 4), ("pre", (64, 32, 64), 4), ("pre", (64, 32, 128), 8),
        ("inter", (64, 32, 128), 4), ("pre", (32, 32, 128), 4), ("pre", (64, 16, 128), 4),
        ("pre", (32, 16, 128), 4), ("pre", (64, 64, 128), 8),
    ]),
    256: ((64, 16, 128), [
        ("base", (64, 16, 128), 4), ("unrolled", (64, 16, 128), 4), ("pre", (64, 16, 128), 4),
        ("inter", (64, 16, 128), 4), ("pre", (32, 16, 128), 4), ("pre", (16, 32, 128), 4),
        ("pre", (32, 32, 128), 4), ("pre", (16, 16, 128), 4),
    ]),
}
K, N = 512, 256  # the headline's last layer


def kernel_text(name, form, bm, bn, bk):
    """One last-layer kernel, unrolled over k: weights first and then the wait ("pre",
    "inter"), or the wait first ("unrolled")."""
    steps = range(0, K, bk)
    src = [
        "@triton.jit(do_not_specialize=['M'])",
        f"def {name}(x_ptr, y_ptr, w_ptr, b_ptr, M):",
    ]
    if form == "unrolled":
        src.append("    tl.extra.cuda.gdc_wait()")
    src += [
        "    pid = tl.program_id(0)",
        f"    m_tiles = tl.cdiv(M, {bm})",
        f"    group = pid // {GROUP * (N // bn)}",
        f"    first = group * {GROUP}",
        f"    rows_in_group = tl.minimum(m_tiles - first, {GROUP})",
        f"    local = pid % {GROUP * (N // bn)}",
        f"    rows = ((first + local % rows_in_group) * {bm} + tl.arange(0, {bm})).to(tl.int64)",
        f"    cols = (local // rows_in_group) * {bn} + tl.arange(0, {bn})",
        "    bias = tl.load(b_ptr + cols).to(tl.float32)",
    ]
    for i, k0 in enumerate(steps):
        src.append(f"    w{i} = tl.load(w_ptr + cols[:, None] * {K} + {k0} + tl.arange(0, {bk})[None, :])")
    if form != "unrolled":
        src.append("    tl.extra.cuda.gdc_wait()")
    src.append(f"    acc = tl.zeros(({bm}, {bn}), dtype=tl.float32)")
    load = (f"tl.load(x_ptr + rows[:, None] * {K} + {{k0}} + tl.arange(0, {bk})[None, :],"
            " mask=rows[:, None] < M, other=0.0)")
    if form == "inter":
        for i, k0 in enumerate(steps):
            src.append(f"    a{i} = {load.format(k0=k0)}")
            src.append(f"    acc = tl.dot(a{i}, tl.trans(w{i}), acc)")
    else:
        for i, k0 in enumerate(steps):
            src.append(f"    a{i} = {load.format(k0=k0)}")
        for i, _ in enumerate(steps):
            src.append(f"    acc = tl.dot(a{i}, tl.trans(w{i}), acc)")
    src += [
        "    acc += bias[None, :]",
        f"    tl.store(y_ptr + rows[:, None] * {N} + cols[None, :], acc.to(tl.float16),"
        " mask=rows[:, None] < M)",
    ]
    return "\n".join(src)


def label(form, tile, warps):
    return f"{form} m{tile[0]}n{tile[1]}k{tile[2]}w{warps}"


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(SRC)[0]
    chains = {t: KernelConfig("chain", block_m=t[0], block_n=t[1], block_k=t[2], num_warps=4,
                              num_stages=3)
              for t in {c[0] for c in CASES.values()} | {v[1] for c in CASES.values()
                                                           for v in c[1] if v[0] == "base"}}
    path = out / "probe_chain.py"
    path.write_text(render(spec, {"test": {i: entry(c) for i, c in enumerate(chains.values(), 1)}}, {}))
    mod = load_module(path)
    mod.gpu_key(torch.device("cuda"))
    assert mod._PDL[0], "PDL is off on this GPU/triton"
    kernels = {}
    lines = ["import triton", "import triton.language as tl", ""]
    for rows, (_, variants) in CASES.items():
        for form, tile, warps in variants:
            if form != "base":
                name = f"_p_{form}_m{tile[0]}_n{tile[1]}_k{tile[2]}"
                if name not in kernels:
                    kernels[name] = None
                    lines += ["", kernel_text(name, form, *tile), ""]
    kpath = out / "probe_kernels.py"
    kpath.write_text("\n".join(lines) + "\n")
    sp = importlib.util.spec_from_file_location("probe_kernels", kpath)
    km = importlib.util.module_from_spec(sp)
    sp.loader.exec_module(km)
    report = []

    def say(s):
        report.append(s)
        print(s, flush=True)

    def runner(l0tile, form, tile, warps):
        c0 = chains[l0tile]
        k0 = mod.KERNELS[c0.kernel_name + "_l0"]
        if form == "base":
            k1 = mod.KERNELS[chains[tile].kernel_name + "_l1"]
        else:
            k1 = getattr(km, f"_p_{form}_m{tile[0]}_n{tile[1]}_k{tile[2]}")

        def run(x, w, b, out=None):
            m = x.shape[0]
            h = x.new_empty((m, 512))
            y = out if out is not None else x.new_empty((m, N))
            g0 = (triton.cdiv(m, c0.block_m) * (512 // c0.block_n), 1)
            mod._run(k0, g0, [x, h, w[0], b[0], m], 4, 3, mod._LAYER_TENSORS)
            g1 = (triton.cdiv(m, tile[0]) * (N // tile[1]), 1)
            mod._run(k1, g1, [h, y, w[1], b[1], m], warps, 3, mod._LAYER_TENSORS, pdl=True)
            return y
        return run

    for rows, (l0tile, variants) in CASES.items():
        fns = {}
        for form, tile, warps in variants:
            run = runner(l0tile, form, tile, warps)
            for m in (rows, rows + 13, 37):
                for seed in range(2):
                    err, why = check(run, spec, m, "cuda", seed)
                    assert not why, (label(form, tile, warps), m, why)
            x, w, b = device_problem(spec, rows, "cuda", 0)
            y = torch.empty(rows, N, device="cuda", dtype=x.dtype)
            fns[label(form, tile, warps)] = lambda run=run, x=x, w=w, b=b, y=y: run(x, w, b, out=y)
        say(f"checked {rows} rows: {len(fns)} variants ok (layer 0: chain m{l0tile[0]}n{l0tile[1]}k{l0tile[2]})")
        t = {k: {"gpu": [], "graph": []} for k in fns}
        for _ in range(5):
            for k, fn in fns.items():
                t[k]["gpu"].append(gpu_us(fn))
                t[k]["graph"].append(replay(fn))
        base = statistics.median(t[next(iter(fns))]["gpu"])
        say(f"{rows} rows: {'last layer':>24} {'gpu':>7} {'/base':>6} {'graph':>7}")
        for k in fns:
            g = statistics.median(t[k]["gpu"])
            say(f"{'':>10}{k:>24} {g:7.2f} {g / base:6.3f} {statistics.median(t[k]['graph']):7.2f}")
    (out / "prefetch.txt").write_text("\n".join(report) + "\n")


def per_call(fn, calls=200):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def replay(fn, reps=200):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return per_call(g.replay, reps)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
