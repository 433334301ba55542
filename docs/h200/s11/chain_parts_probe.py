"""Session 11 probe: where the headline's GPU time at 1024 rows goes (the target is 5-6 us; what
CUDA graphs run there, chain, took 6.46 in run47). The shipped chain kernels timed together and
apart, beside an empty kernel on the same grid, the call winner (persist) and eager: GPU us per
call (measure.gpu_us: CUDA graph of 20 calls), all alternating, medians of 5 rounds. The
shipped module's own launch helper runs each kernel (module._run; layer 2 is compiled for
programmatic dependent launch, as the module launches it). Outputs checked first.
Run from the repository root: python3 docs/h200/s11/chain_parts_probe.py OUT"""

import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
import triton

from mlpgen.emit import read_module
from mlpgen.measure import check, device_problem, gpu_us
from mlpgen.selfcheck import load_module

SRC = Path("tuned/mlp_256x512x256_gelu_fp16.py")
H200 = "NVIDIA H200|sm90|132"
M = 1024


@triton.jit
def _noop(p):
    pass


def graph_cell(cell):
    """The CUDA-graph winner of a TUNED cell as a cell of its own."""
    return {k[6:]: v for k, v in cell.items() if k.startswith("graph_")} or cell


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(SRC)[0]
    mod = load_module(SRC)
    cell = mod.TUNED[H200][M]
    gcell = graph_cell(cell)
    lines = [f"torch {torch.__version__}, {torch.cuda.get_device_name()}; call {cell['kernel']},"
             f" graph {gcell['kernel']}"]
    for name, c in (("chain", gcell), ("persist", cell)):
        err, why = check(lambda x, w, b, out=None, c=c: mod._launch(x, w, b, c, out=out),
                         spec, M, "cuda", 1)
        lines.append(f"{name} at {M} rows: relative error {err:.1e} {why or 'ok'}")
    x, w, b = device_problem(spec, M, "cuda", 3)
    steps = mod._layer_steps(gcell, M)
    (k1, g1, n1), (k2, g2, n2) = steps
    h = torch.empty(M, n1, dtype=x.dtype, device=x.device)
    y = torch.empty(M, n2, dtype=x.dtype, device=x.device)
    dev = x.get_device()
    nw, ns, lt = gcell["num_warps"], gcell["num_stages"], mod._LAYER_TENSORS
    mod._launch(x, w, b, gcell)  # compiles both layers as the module launches them
    pdl = bool(mod._PDL[0])
    lines.append(f"grids: layer 1 {g1[0]} programs, layer 2 {g2[0]}; layer 2 with PDL: {pdl}")
    contenders = {
        "empty kernel (layer 1's grid)": lambda: _noop[(g1[0],)](h),
        "layer 1 alone": lambda: mod._run(k1, g1, [x, h, w[0], b[0], M], nw, ns, lt, dev, False),
        "layer 2 alone (PDL launch)": lambda: mod._run(k2, g2, [h, y, w[1], b[1], M], nw, ns, lt,
                                                        dev, pdl),
        "chain, both layers (shipped graph kernel)": lambda: mod._launch(x, w, b, gcell),
        "persist (shipped call kernel)": lambda: mod._launch(x, w, b, cell),
        "eager": lambda: F.linear(F.gelu(F.linear(x, w[0], b[0])), w[1], b[1]),
    }
    times = {k: [] for k in contenders}
    for _ in range(5):
        for k, fn in contenders.items():
            times[k].append(gpu_us(fn))
    lines.append(f"GPU us per call at {M} rows (CUDA graph of 20 calls), medians of 5 rounds:")
    for k, v in times.items():
        lines.append(f"  {k:<44} {statistics.median(v):7.2f}   ({min(v):.2f}-{max(v):.2f})")
    text = "\n".join(lines)
    print(text)
    (out / "chain_parts.txt").write_text(text + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
