"""Session 20: what a CUDA-graph replay costs when its kernels are short (the bench's graph row).

For graphs of one empty Triton kernel (1 and 256 programs), of three empty kernels (eager's
graph at these widths has three), and for the headline module and eager nn.Sequential captured
at 1, 16, 64 and 1024 rows (mlpgen.bench.capture, as `mlpgen bench` captures them; outputs
checked against the fp32 reference first), two times per replay, alternating over the graphs,
medians of 5 rounds:
- per call: a loop of replays then one synchronize (mlpgen.bench.host_time_us, the bench's);
- host: the same loop without the synchronize, timed up to the last replay's return (the host's
  cost of submitting one replay; the synchronize follows, untimed).
Where per call equals host, the replays wait for the host, not for the GPU.
Run from the repository root: python3 docs/h200/s20/replay_floor_probe.py OUT"""

import statistics
import sys
import time
from pathlib import Path

import torch
import triton

from mlpgen.bench import build_fused, build_sequential, capture, host_time_us, verdict
from mlpgen.emit import read_module
from mlpgen.selfcheck import load_module
from mlpgen.verify import random_problem, reference

MODULE = Path("tuned/mlp_256x512x256_gelu_fp16.py")
ROWS = (1, 16, 64, 1024)
ROUNDS = 5
SUBMITS = 200


@triton.jit
def _empty(p):
    pass


def empty_graph(programs: int, kernels: int):
    buf = torch.empty(1, device="cuda")
    _empty[(programs,)](buf)  # compiled outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(kernels):
            _empty[(programs,)](buf)
    return graph, buf


def submit_us(replay) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(SUBMITS):
        replay()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / SUBMITS * 1e6


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(MODULE)[0]
    mod = load_module(MODULE)
    _, w, b = random_problem(spec, 1, device="cuda", seed=0)
    fused, seq = build_fused(mod, w, b), build_sequential(spec, w, b)
    graphs = {}  # name -> (replay, kept alive)
    for programs, kernels in ((1, 1), (256, 1), (1, 3)):
        g = empty_graph(programs, kernels)
        graphs[f"empty x{kernels}, {programs} programs"] = (g[0].replay, g)
    gen = torch.Generator(device="cpu").manual_seed(1)
    with torch.no_grad():
        for rows in ROWS:
            x = torch.randn(rows, spec.widths[0], generator=gen).to("cuda", torch.float16)
            expected = reference(spec, x, w, b)
            for name, model in (("mlpgen", fused), ("eager", seq)):
                prepared = capture(model, x)
                status, err = verdict(prepared.output(), expected, spec.dtype)
                print(f"check {name} rows {rows}: {status} {err:.2e}", flush=True)
                if status != "ok":
                    sys.exit(f"{name} at {rows} rows is wrong")
                graphs[f"{name}, {rows} rows"] = (prepared.call, prepared)
        per = {n: [] for n in graphs}
        host = {n: [] for n in graphs}
        for _ in range(ROUNDS):
            for name, (replay, _) in graphs.items():
                per[name].append(host_time_us(replay, torch.cuda.synchronize))
                host[name].append(submit_us(replay))
    lines = [f"{'graph':32} {'per call':>9} {'host':>7} {'host/per':>9}"]
    for name in graphs:
        p, h = statistics.median(per[name]), statistics.median(host[name])
        lines.append(f"{name:32} {p:9.2f} {h:7.2f} {h / p:9.2f}")
    lines.append(
        f"µs per replay, medians of {ROUNDS} rounds; {torch.cuda.get_device_name()}, "
        f"torch {torch.__version__}, triton {triton.__version__}"
    )
    text = "\n".join(lines)
    print(text)
    (out / "replay_floor.txt").write_text(text + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
