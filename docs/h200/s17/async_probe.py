"""Session 17 probe: the dot-form cluster hand-over with stores that signal their owner's
mbarrier (st.async ... mbarrier::complete_tx::bytes) instead of the second cluster barrier.
Each CTA's thread 0 initialises an mbarrier past its receive buffer and arrives on it expecting
the buffer's whole size (every CTA stores all its block_m x bn partials there, rows past M too),
then fences the init for the cluster before the first barrier's arrive; the remote stores are
_cluster_store's with st.async (16-byte, 8-byte or 4-byte, each completing its bytes on the
owner's mbarrier), and the owner waits on its own mbarrier (acquire, cluster scope) instead of
barrier.cluster.arrive.release + wait, whose release is a MEMBAR.ALL.GPU. Variants are text
edits of docs/h200/s17/before_module.py's kernels (the templates of b477f12). Checked first
(NaN-poisoned output, fp32 reference) at 3, 17, 100 and the timed rows, 2 seeds; then GPU us
per call as the tuner measures it (measure.gpu_us) and one call in a CUDA graph replayed 200
times, alternating, medians of 5 rounds.
Run from the repository root: python3 docs/h200/s17/async_probe.py OUT"""

import re
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from prefetch_probe import replay  # noqa: E402

from mlpgen.emit import read_module  # noqa: E402
from mlpgen.measure import check, device_problem, gpu_us  # noqa: E402
from mlpgen.selfcheck import load_module  # noqa: E402

SRC = Path("docs/h200/s17/before_module.py")
KERNELS = {  # kernel -> (warps, rows timed)
    "_k_cluster_m16_c32_k128": (4, (16, 64)),
    "_k_cluster_m16_c32_k256": (4, (16, 64)),
    "_k_cluster_m16_c64_k256": (4, (16, 64, 256)),
    "_k_cluster_m32_c64_k256": (4, (64, 256)),
}
ST = "st.async.shared::cluster.mbarrier::complete_tx::bytes"


def function_source(text, name):
    start = text.index(f"@triton.jit\ndef {name}(")
    end = text.index("\n\n\n", start)
    return text[start:end] + "\n"


def helpers(store_src, nb):
    """_mbar_init / _cluster_store_async / _mbar_wait for a receive buffer of nb bytes."""
    s = store_src.replace("def _cluster_store(", f"def _cluster_store_async_{nb}(")
    s = s.replace('"mapa.shared::cluster.u32 r3, a, $15; "',
                  '"mapa.shared::cluster.u32 r3, a, $15; "\n'
                  f'        "mov.u32 a, global_smem; add.u32 a, a, $8; add.u32 a, a, {nb}; "\n'
                  '        "mapa.shared::cluster.u32 m0, a, $12; mapa.shared::cluster.u32 m1, a, $13; "\n'
                  '        "mapa.shared::cluster.u32 m2, a, $14; mapa.shared::cluster.u32 m3, a, $15; "')
    s = s.replace(".reg .u32 a, r0, r1, r2, r3, d;", ".reg .u32 a, r0, r1, r2, r3, d, m0, m1, m2, m3;")
    s = s.replace("st.shared::cluster.v4.f32 [r0], {$20, $21, $22, $23};",
                  f"{ST}.v4.f32 [r0], {{$20, $21, $22, $23}}, [m0];")
    s = s.replace("st.shared::cluster.v2.f32 [r0], {$20, $21};", f"{ST}.v2.f32 [r0], {{$20, $21}}, [m0];")
    s = s.replace("st.shared::cluster.v2.f32 [r2], {$22, $23};", f"{ST}.v2.f32 [r2], {{$22, $23}}, [m2];")
    for i, v in enumerate(("$20", "$21", "$22", "$23")):
        s = s.replace(f"st.shared::cluster.f32 [r{i}], {v};", f"{ST}.f32 [r{i}], {v}, [m{i}];")
    assert s.count("st.async") == 7 and "st.shared::cluster" not in s, s
    return s + f'''

@triton.jit
def _mbar_init_{nb}(base):
    return tl.inline_asm_elementwise(
        "{{ .reg .pred p; .reg .u32 a, t; mov.u32 t, %tid.x; setp.eq.u32 p, t, 0; "
        "mov.u32 a, global_smem; add.u32 a, a, $1; add.u32 a, a, {nb}; "
        "@p mbarrier.init.shared::cta.b64 [a], 1; "
        "@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [a], {nb}; "
        "fence.mbarrier_init.release.cluster; mov.u32 $0, 0; }}",
        "=r,r", [base], dtype=tl.int32, is_pure=False, pack=1,
    )


@triton.jit
def _mbar_wait_{nb}(base):
    return tl.inline_asm_elementwise(
        "{{ .reg .pred p; .reg .u32 a; mov.u32 a, global_smem; add.u32 a, a, $1; "
        "add.u32 a, a, {nb}; WAIT_{nb}: "
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [a], 0; "
        "@!p bra WAIT_{nb}; mov.u32 $0, 0; }}",
        "=r,r", [base], dtype=tl.int32, is_pure=False, pack=1,
    )
'''


def variant(src, name):
    nb = int(re.search(r"base = _cluster_buffer\((\d+)\)", src).group(1))
    s = src.replace(f"def {name}(", f"def {name}_a(")
    s = s.replace(f"base = _cluster_buffer({nb})", f"base = _cluster_buffer({nb + 16})\n"
                  f"    _mbar_init_{nb}(base)")
    s, n = re.subn(r"_cluster_store\(slot, base, owner, ok, part\)",
                   f"_cluster_store_async_{nb}(slot, base, owner, ok * 0 + 1, part)", s)
    assert n == 1
    s, n = re.subn(r"dep = _cluster_sync\(\)", f"dep = _mbar_wait_{nb}(base)", s)
    assert n == 1
    return s, nb


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(SRC)[0]
    text = SRC.read_text()
    store_src = function_source(text, "_cluster_store")
    extra, launch, sizes = [], [], set()
    for name in KERNELS:
        start = text.index(f'@triton.jit(do_not_specialize=["M"])\ndef {name}(')
        end = text.index(f"_CLUSTER_LAUNCH[{name}]", start)
        v, nb = variant(text[start:end].rstrip() + "\n", name)
        if nb not in sizes:
            sizes.add(nb)
            extra.append(helpers(store_src, nb))
        extra.append(v)
        launch.append(f"_CLUSTER_LAUNCH[{name}_a] = (_CLUSTER_LAUNCH[{name}][0], {nb + 16})")
    marker = "\n\ndef _launch("
    path = out / "async_module.py"
    path.write_text(text.replace(marker, "\n\n" + "\n\n\n".join(extra) + "\n" + "\n".join(launch)
                                 + "\n" + marker, 1))
    mod = load_module(path)
    report = []

    def say(s):
        report.append(s)
        print(s, flush=True)

    cells = {}
    for name, (warps, rows) in KERNELS.items():
        base = next(c for c in mod.TUNED["test"].values()
                    if c["kernel"] == name and c["num_warps"] == warps)
        for form, kname in (("barrier", name), ("async", name + "_a")):
            mod.KERNELS[kname] = getattr(mod, kname)
            cell = dict(base, kernel=kname)

            def run(x, w, b, out=None, cell=cell):
                return mod._launch(x, w, b, cell, out=out)
            for m in (3, 17, 100, *rows):
                for seed in range(2):
                    err, why = check(run, spec, m, "cuda", seed)
                    assert not why, (form, name, m, why)
            cells[name, form] = cell
        say(f"checked {name} w{warps}: ok (barrier and async)")
    for m in sorted({r for _, rows in KERNELS.values() for r in rows}):
        x, w, b = device_problem(spec, m, "cuda", 0)
        y = torch.empty(m, spec.widths[-1], device="cuda", dtype=x.dtype)
        keys = [k for k in cells if m in KERNELS[k[0]][1]]
        fns = {k: (lambda c=cells[k], x=x, w=w, b=b, y=y: mod._launch(x, w, b, c, out=y))
               for k in keys}
        t = {k: {"gpu": [], "graph": []} for k in fns}
        for _ in range(5):
            for k, fn in fns.items():
                t[k]["gpu"].append(gpu_us(fn))
                t[k]["graph"].append(replay(fn))
        say(f"{m} rows: {'kernel':>24} {'gpu barrier':>11} {'async':>7} {'ratio':>6}"
            f" {'graph barrier':>13} {'async':>7}")
        for name in dict.fromkeys(k[0] for k in keys):
            med = {(f, what): statistics.median(t[(name, f)][what])
                   for f in ("barrier", "async") for what in ("gpu", "graph")}
            say(f"{'':>8}{name:>26} {med['barrier', 'gpu']:11.2f} {med['async', 'gpu']:7.2f}"
                f" {med['async', 'gpu'] / med['barrier', 'gpu']:6.2f}"
                f" {med['barrier', 'graph']:13.2f} {med['async', 'graph']:7.2f}")
    (out / "async.txt").write_text("\n".join(report) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
