"""Session 22: run159's loop probe timed chain's calls at the headline's 1024 rows at 14.1-15.9
us, run161's tuner probe at 8.98-9.57 through the same shipped module in another process. The
two set their problem up differently: loop_probe.py draws it on the CPU (verify.random_problem),
the tuner on the device (measure.device_problem). Here both setups in one process, for the
shipped 1024-row call cell (persist) and its graph cell (chain), alternating, ROUNDS rounds:
- lane: whether the native lane's C++ call itself takes the call (returns an output);
- least 50: the tuner's host time (measure.host_us: the least of 15 loops of 50 calls);
- stream: the GPU's time per call over 1500 calls fed by the host (CUDA events around them);
then once more after a CUDA graph of 20 calls was captured (as measure.gpu_us does).
Run from the repository root: python3 docs/h200/s22/lane_probe.py OUT"""

import statistics
import sys
from pathlib import Path

import torch
from headline_cells import MODULE, ROWS, cells, publish, serve

from mlpgen.bench import verdict
from mlpgen.emit import read_module
from mlpgen.measure import device_problem, gpu_us, host_us
from mlpgen.selfcheck import load_module
from mlpgen.verify import random_problem, reference

ROUNDS = 3
LONG = 1500


def stream_us(fn) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(LONG):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / LONG * 1e3


def measure(mod, cell, problem, captured: bool) -> dict:
    x, w, b = problem
    serve(mod, cell)
    fn = lambda: mod.mlp(x, w, b)  # noqa: E731
    fn()
    if captured:
        gpu_us(fn)
    params = mod._join(w, b)
    lane = mod._native_state is not None and (
        mod._native_call(mod._native_state, x, params, None) is not None
    )
    return {"lane": lane, "least 50": host_us(fn, torch.cuda.synchronize), "stream": stream_us(fn)}


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    spec = read_module(MODULE)[0]
    mod = load_module(MODULE)
    table = cells(mod)
    problems = {
        "random_problem": random_problem(spec, ROWS, device="cuda", seed=3),
        "device_problem": device_problem(spec, ROWS, "cuda", seed=1),
    }
    results: dict[tuple, list[dict]] = {}
    with torch.no_grad():
        for setup, (x, w, b) in problems.items():
            for name, cell in table.items():
                serve(mod, cell)
                status, err = verdict(mod.mlp(x, w, b), reference(spec, x, w, b), spec.dtype)
                print(f"check {name} {setup}: {status} {err:.2e}", flush=True)
                if status != "ok":
                    sys.exit(f"{name} is wrong")
        for captured in (False, True):
            for _ in range(ROUNDS):
                for setup, problem in problems.items():
                    for name, cell in table.items():
                        key = (name, setup, "after a capture" if captured else "")
                        results.setdefault(key, []).append(measure(mod, cell, problem, captured))
    lines = [f"{'cell, setup':44} {'lane':>6} {'least 50':>9} {'stream':>8}"]
    for (name, setup, when), rs in results.items():
        taken = [r["lane"] for r in rs]
        lane = "yes" if all(taken) else "some" if any(taken) else "no"
        least = statistics.median(r["least 50"] for r in rs)
        stream = statistics.median(r["stream"] for r in rs)
        lines.append(f"{f'{name} {setup} {when}':44} {lane:>6} {least:9.2f} {stream:8.2f}")
    publish(out, "lane_probe.txt", lines, table, ROUNDS)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
