"""Session 23 probe: stream tiles outside the space's domain at the headline's large batches.

The stream strategy's chunk (space.DOMAINS["stream"]: 64, 128) splits x's 256 columns and the
output's 256 into chunks; each chunk is its own tl.dot, so a 128-column chunk makes the second
layer two wgmma groups of N = 128 that read the hidden slice twice. A 256-column chunk makes
each layer one dot (N = 256 for the second, wgmma's widest); shared memory and registers are the
same (space.stream_reason). 16 warps give each 128-row tile four warpgroups. Here those tiles
beside the shipped ones (stream at 16384 rows, stream_tma above), every config checked first
(measure.check at the timed M, M + 13 and 37 rows, 2 seeds), then GPU µs per call as the tuner
measures it (measure.gpu_us: a CUDA graph of 20 calls; at 262144 rows a graph of 2 calls), the
configs alternating, medians of 3 rounds.
Run from the repository root: python3 docs/h200/s23/stream_tiles_probe.py OUT"""

import statistics
import sys
from pathlib import Path

import torch
import triton

from mlpgen import measure
from mlpgen.emit import entry, read_module, render
from mlpgen.measure import check, device_problem, gpu_us
from mlpgen.selfcheck import load_module
from mlpgen.spec import KernelConfig

HEADLINE = Path("tuned/mlp_256x512x256_gelu_fp16.py")
CONFIGS = [
    KernelConfig(s, block_m=128, block_n=64, chunk=c, num_warps=w, num_stages=2)
    for s, c, w in [
        ("stream", 128, 8),
        ("stream_tma", 128, 8),
        ("stream", 256, 8),
        ("stream", 128, 16),
        ("stream", 256, 16),
        ("stream_tma", 128, 16),
    ]
]
ROWS = (16384, 65536, 262144)
ROUNDS = 3


def label(c):
    return f"{c.strategy} c{c.chunk} w{c.num_warps}"


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(HEADLINE)[0]
    path = out / "stream_tiles_module.py"
    path.write_text(render(spec, {"test": {i: entry(c) for i, c in enumerate(CONFIGS, 1)}}, {}))
    mod = load_module(path)
    mod.gpu_key(torch.device("cuda"))
    lines = []

    def say(s):
        lines.append(s)
        print(s, flush=True)

    ok = {}
    for i, c in enumerate(CONFIGS, 1):
        cell = mod.TUNED["test"][i]

        def run(x, w, b, out=None, cell=cell):
            return mod._launch(x, w, b, cell, out=out)

        try:
            for m in (37, 16384 + 13, 16384):
                for seed in range(2):
                    err, why = check(run, spec, m, "cuda", seed)
                    assert not why, why
            ok[label(c)] = run
            say(f"checked {label(c)}: ok")
        except Exception as e:  # a tile the GPU rejects (shared memory, registers): say so
            say(f"checked {label(c)}: FAILED {type(e).__name__}: {str(e)[:160]}")
    say("")
    say("| rows | " + " | ".join(ok) + " |")
    say("|---:|" + "---:|" * len(ok))
    for m in ROWS:
        x, w, b = device_problem(spec, m, "cuda", 0)
        y = torch.empty(m, spec.widths[-1], device="cuda", dtype=x.dtype)
        measure.GRAPH_CALLS = 20 if m < 262144 else 2
        t = {k: [] for k in ok}
        for _ in range(ROUNDS):
            for k, run in ok.items():
                t[k].append(gpu_us(lambda run=run, x=x, w=w, b=b, y=y: run(x, w, b, out=y)))
        say(f"| {m} | " + " | ".join(f"{statistics.median(v):.2f}" for v in t.values()) + " |")
    say(
        f"GPU µs per call (CUDA graph), medians of {ROUNDS} rounds; 128 x 64 tiles, 2 stages; "
        f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}"
    )
    (out / "stream_tiles.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, ".")
    main(Path(sys.argv[1]))
