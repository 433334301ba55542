"""Session 17 probe: where a small batch's cluster kernel spends its time. The shipped headline's
16-row and one-row cluster kernels (_k_cluster_m16_c32_k128, the 64-row winner;
_k_cluster_m1_c32_k128, the 1- and 16-row winner) cut back part by part, each variant a copy of
the kernel's rendered source with only its body changed, launched as the shipped kernel is (the
same clusters, shared memory and grid); results wrong on purpose but for "whole":
  plain empty  a plain (non-cluster) launch of an empty kernel: the launch floor
  empty        the cluster launch of an empty body
  barriers     the two cluster barriers and a store of 0, no loads
  no hand-over loads, both layers and the store, no cluster barrier, no remote store (the sum of
               the CTA's partials stands in for the hand-over, a block reduction)
  no stores    the whole kernel with every remote store masked off (barriers and reads kept)
  whole        the shipped kernel
GPU us per call as the tuner measures it (measure.gpu_us: CUDA graph of 20 calls) and one call
in a CUDA graph replayed 200 times, variants alternating, medians of 5 rounds.
Run from the repository root: python3 docs/h200/s17/cluster_parts_probe.py OUT"""

import re
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from prefetch_probe import replay  # noqa: E402

from mlpgen.emit import read_module  # noqa: E402
from mlpgen.measure import device_problem, gpu_us  # noqa: E402
from mlpgen.selfcheck import load_module  # noqa: E402

SRC = Path("tuned/mlp_256x512x256_gelu_fp16.py")
KERNELS = {"_k_cluster_m16_c32_k128": (16, 64), "_k_cluster_m1_c32_k128": (1, 16)}  # -> rows
FORMS = ("plain empty", "empty", "barriers", "no hand-over", "no stores", "whole")


def kernel_source(text, name):
    start = text.index(f'@triton.jit(do_not_specialize=["M"])\ndef {name}(')
    end = text.index(f"_CLUSTER_LAUNCH[{name}]", start)
    return text[start:end].rstrip() + "\n"


def variant(src, name, form, tag):
    """The kernel's source cut back to `form`, renamed name + tag."""
    lines = src.replace(f"def {name}(", f"def {name}{tag}(").splitlines()
    head = lines[:2]  # decorator, def
    body = lines[2:]
    base = next(ln for ln in body if "_cluster_buffer(" in ln)
    if form in ("plain empty", "empty"):
        return "\n".join(head + ["    pass"]) + "\n"
    if form == "barriers":
        return "\n".join(head + [base, "    _cluster_arrive()", "    dep = _cluster_wait()",
                                 "    dep += _cluster_sync()",
                                 "    tl.store(y_ptr + tl.program_id(0) * 0 + dep, 0.0)"]) + "\n"
    out = []
    for ln in body:
        s = ln.strip()
        if form == "no hand-over":
            if s == "_cluster_arrive()" or s.startswith("_cluster_store"):
                continue
            ln = ln.replace("_cluster_wait()", "0").replace("_cluster_sync()", "0")
            m = re.match(r"(\s*)out = tl\.sum\(_cluster_load\((.*), base\), axis=0\)$", ln)
            if m:  # the CTA's partials summed instead of the slots: keeps them live
                part = "part" if "part =" in src else "part0"
                ln = f"{m.group(1)}out = tl.sum(({m.group(2)}) * 0.0, axis=0) + tl.sum({part})"
        elif form == "no stores" and s.startswith("_cluster_store"):
            ln = re.sub(r"(_cluster_store1?\([^,]+, [^,]+, [^,]+, )(ok)(,)", r"\1\2 * 0\3", ln)
            assert "ok * 0" in ln, ln
        out.append(ln)
    return "\n".join(head + out) + "\n"


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(SRC)[0]
    text = SRC.read_text()
    extra, launch = [], []
    for name in KERNELS:
        src = kernel_source(text, name)
        for i, form in enumerate(FORMS):
            if form == "whole":
                continue
            tag = f"_v{i}"
            extra.append(variant(src, name, form, tag))
            if form != "plain empty":
                launch.append(f"_CLUSTER_LAUNCH[{name}{tag}] = _CLUSTER_LAUNCH[{name}]")
    marker = "\n\ndef _launch("
    assert marker in text
    path = out / "parts_module.py"
    path.write_text(text.replace(marker, "\n\n" + "\n\n\n".join(extra) + "\n" + "\n".join(launch)
                                 + "\n" + marker, 1))
    (out / "variants.py").write_text("\n\n".join(extra))
    mod = load_module(path)
    key = mod.gpu_key()
    report = []

    def say(s):
        report.append(s)
        print(s, flush=True)

    for name, rows in KERNELS.items():
        cell = next(c for c in mod.TUNED[key].values() if c["kernel"] == name)
        for m in rows:
            x, w, b = device_problem(spec, m, "cuda", 0)
            y = torch.empty(m, spec.widths[-1], device="cuda", dtype=x.dtype)
            ref = mod._launch(x, w, b, cell).float()
            fns = {}
            for i, form in enumerate(FORMS):
                kname = name if form == "whole" else f"{name}_v{i}"
                c = dict(cell, kernel=kname)
                if form == "plain empty":
                    k = getattr(mod, kname)
                    grid = (max(1, -(-m // cell["block_m"])) * 16, 1)
                    fns[form] = (lambda k=k, grid=grid, x=x, w=w, b=b, y=y, m=m: mod._run(
                        k, grid, [x, y, w[0], b[0], w[1], b[1], m], 4, 1))
                else:
                    mod.KERNELS[kname] = getattr(mod, kname)
                    fns[form] = (lambda c=c, x=x, w=w, b=b, y=y: mod._launch(x, w, b, c, out=y))
            fns["whole"]()
            torch.cuda.synchronize()
            assert torch.allclose(y.float(), ref), "the whole kernel's output moved"
            t = {k: {"gpu": [], "graph": []} for k in fns}
            for _ in range(5):
                for k, fn in fns.items():
                    t[k]["gpu"].append(gpu_us(fn))
                    t[k]["graph"].append(replay(fn))
            say(f"{name} at {m} rows: {'part':>14} {'gpu':>7} {'graph':>7}")
            for k in fns:
                say(f"{'':>30}{k:>14} {statistics.median(t[k]['gpu']):7.2f}"
                    f" {statistics.median(t[k]['graph']):7.2f}")
    (out / "parts.txt").write_text("\n".join(report) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
