"""Session 28: 1024,4096,1024 bf16's plain calls at 1 and 64 rows were slower than eager's in
bench's GPU time, one call after an L2 flush (run203: 21.0 against 20.1 µs, 26.3 against 22.6),
and faster back to back (run202: 11.73 against 12.87, 12.71 against 14.38). The flush cost ours
7.07 / 8.35 µs, eager's 4.51 / 4.63. Do the shipped cells' pipeline depths decide that? The 1-row
cell (split, 16 x 256 tiles of 32-wide hidden chunks, k 128) has 1 stage; the 64-row cell
(chain, 64 x 32, k 128, PDL) 3.

Each variant, its cell with another num_stages, is rendered into a module of its own, checked
against the fp32 reference (mlpgen.measure.check at the row count, rows + 13 and 37 rows, 2
seeds), then timed beside eager: "flushed", bench's GPU time (mlpgen.bench.gpu_time_us: one call
after an L2 flush, the GPU kept busy over its launch); "back to back", the tuner's
(mlpgen.measure.gpu_us: a CUDA graph of 20 calls). Contenders alternate; medians of ROUNDS
rounds. Table: OUT/stages.txt.
Run from the repository root: python3 docs/h200/s28/cold_stages_probe.py OUT"""

import os
import statistics
import sys
from dataclasses import replace
from pathlib import Path

MODULE = Path("tuned/mlp_1024x4096x1024_gelu_tanh_bf16.py")
GPU = "NVIDIA H200|sm90|132"
ROUNDS = int(os.environ.get("COLD_PROBE_ROUNDS", "3"))
STAGES = {1: (1, 2, 3), 64: (2, 3, 4)}


def main(out: Path) -> None:
    import torch
    import triton

    from mlpgen.bench import build_sequential, gpu_time_us, host_time_us
    from mlpgen.emit import entry, read_module, render
    from mlpgen.measure import check, device_problem, gpu_us, hot_path, launcher
    from mlpgen.selfcheck import load_module
    from mlpgen.spec import KernelConfig

    out.mkdir(parents=True, exist_ok=True)
    spec, tuned, _ = read_module(MODULE)
    lines = []

    def say(s):
        lines.append(s)
        print(s, flush=True)

    def flushed(fn):
        return gpu_time_us(fn, 25, 100, host_time_us(fn, torch.cuda.synchronize))

    say("| rows | variant | flushed | back to back |")
    say("|---:|---|---:|---:|")
    for rows, stages in STAGES.items():
        shipped = KernelConfig.from_dict(tuned[GPU][rows])
        x, w, b = device_problem(spec, rows, "cuda", 0)
        seq = build_sequential(spec, w, b)
        calls = {"eager": lambda seq=seq, x=x: seq(x)}
        for s in stages:
            config = replace(shipped, num_stages=s)
            name = f"{config.strategy} {s} stage(s)" + (" (shipped)" if config == shipped else "")
            f = out / f"v{rows}_{s}.py"
            f.write_text(render(spec, {"test": {1: entry(config)}}, {}))
            mod = load_module(f)
            for m in sorted({rows, rows + 13, 37}):
                for seed in range(2):
                    err, why = check(launcher(mod, config), spec, m, "cuda", seed)
                    assert not why, (name, m, why)
            calls[name] = hot_path(mod, config, x, w, b)
        t = {n: {"flushed": [], "b2b": []} for n in calls}
        with torch.no_grad():
            for _ in range(ROUNDS):
                for n, fn in calls.items():
                    t[n]["flushed"].append(flushed(fn))
                    t[n]["b2b"].append(gpu_us(fn))
        for n in calls:
            med = {k: statistics.median(v) for k, v in t[n].items()}
            say(f"| {rows} | {n} | {med['flushed']:.2f} | {med['b2b']:.2f} |")
    say(
        f"µs per call, medians of {ROUNDS} rounds; {torch.cuda.get_device_name()}, torch "
        f"{torch.__version__}, triton {triton.__version__}"
    )
    (out / "stages.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    main(Path(sys.argv[1]))
