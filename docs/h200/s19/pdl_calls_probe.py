"""Session 19: consecutive calls linked by programmatic dependent launch (the call's first kernel
launched with PDL, a cell's "pdl"; every kernel opens with _pdl_enter: release the next kernel,
then wait for the previous one) against the same cell launched plainly (as shipped before).
(run142 ran this probe when a module-wide switch, _PDL_CALLS, chose it: the same kernels and
launches as the cells' "pdl" now; two module copies then, one cell each way now.)

For each module and batch, the table's call and CUDA-graph cells:
- checked: one call against the fp32 reference (measure.check), both ways; where the MLP's
  input and output widths match, 20 calls chained (each call's output the next one's input) in
  a CUDA graph, PDL on against off: the outputs must be equal bit for bit (the same kernels in
  the same order; a kernel reading its input early would differ);
- timed, the two ways alternating, medians of 5 rounds, GPU us per call: a CUDA graph of 20
  independent calls (measure.gpu_us, the tuner's measure), 20 chained calls, and one call
  captured alone and replayed with L2 flushed before each replay (mlpgen bench's graph row).
Run from the repository root: python3 docs/h200/s19/pdl_calls_probe.py OUT MODULE.py:BATCHES..."""

import statistics
import sys
from pathlib import Path

import torch
from triton.testing import do_bench

from mlpgen.bench import capture
from mlpgen.emit import read_module
from mlpgen.measure import GRAPH_CALLS, check, device_problem, gpu_us
from mlpgen.selfcheck import load_module

H200 = "NVIDIA H200|sm90|132"
ROUNDS = 5


def chained_graph(mod, cell, x, w, b):
    """20 calls, each on the previous one's output, captured in one graph: (graph, last y)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        mod._launch(x, w, b, cell)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = x
        for _ in range(GRAPH_CALLS):
            y = mod._launch(y, w, b, cell)
    return graph, y


def replay_us(graph) -> float:
    return do_bench(graph.replay, warmup=25, rep=100, return_mode="median") * 1e3 / GRAPH_CALLS


def one_replay_us(mod, cell, x, w, b) -> float:
    prepared = capture(lambda t: mod._launch(t, w, b, cell), x)
    return do_bench(prepared.call, warmup=25, rep=100, return_mode="median") * 1e3


def probe(path: Path, batches: list[int], log) -> None:
    spec = read_module(path)[0]
    mod = load_module(path)
    square = spec.widths[0] == spec.widths[-1]
    for m in batches:
        for graph in (False, True):
            cell = mod.config_for(m, H200, graph)
            if cell.get("kernel") is None:  # the torch path: nothing of ours to link
                continue
            if graph and cell["kernel"] == mod.config_for(m, H200)["kernel"]:
                continue  # no graph winner of its own
            ways = ({**cell, "pdl": True}, {**cell, "pdl": False})  # linked, plain
            name = cell["kernel"]
            x, w, b = device_problem(spec, m, "cuda", 7)
            for c in ways:
                err, why = check(lambda *a, out, c=c: mod._launch(*a, c, out=out), spec, m,
                                 "cuda", 3)
                if why:
                    raise SystemExit(f"{path.stem} {m} {name}: {why}")
            same = ""
            if square:
                graphs = [chained_graph(mod, c, x, w, b) for c in ways]
                for g, _ in graphs:
                    g.replay()
                torch.cuda.synchronize()
                if not torch.equal(graphs[0][1], graphs[1][1]):
                    raise SystemExit(f"{path.stem} {m} {name}: chained outputs differ")
                same = "equal"
            rows = {k: ([], []) for k in ("indep", "chain", "alone")}
            for _ in range(ROUNDS):
                for i, c in enumerate(ways):
                    rows["indep"][i].append(gpu_us(lambda c=c: mod._launch(x, w, b, c)))
                    if square:
                        rows["chain"][i].append(replay_us(graphs[i][0]))
                    rows["alone"][i].append(one_replay_us(mod, c, x, w, b))
            cols = []
            for k, (a, c) in rows.items():
                if a:
                    ma, mc = statistics.median(a), statistics.median(c)
                    cols.append(f"{k} {ma:7.2f} / {mc:7.2f} ({ma / mc:.3f})")
            line = (f"{path.stem[4:]:<28} {m:>6} {'graph' if graph else 'call ':<5} {name:<34} "
                    f"{same:<5} " + "  ".join(cols))
            print(line, flush=True)
            log.write(line + "\n")
            log.flush()


def main(out: Path, jobs: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "pdl_calls.txt", "w") as log:
        log.write("module, rows, cell, kernel, chained check, then per kind: PDL on / off "
                  "(on/off), GPU us a call\n")
        for job in jobs:
            path, batches = job.split(":")
            probe(Path(path), [int(m) for m in batches.split(",")], log)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
