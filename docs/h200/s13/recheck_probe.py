"""Session 13: the GPU time of a module's tuned cells measured again, as the tuner measures it
(CUDA graph of 20 calls, measure.gpu_us), medians of 5 rounds, next to the time its table
records. run95's re-tune of 64,64,64,64,64,3 recorded 53.08 us at 262144 rows for the kernel
(rowblock m64 c64, 4 warps) that the earlier table recorded at 31.82 and run95's bench timed at
37.1 by do_bench; this says which to believe.
Run from the repository root: python3 docs/h200/s13/recheck_probe.py MODULE.py BATCH..."""

import statistics
import sys
from pathlib import Path

from mlpgen.emit import read_module
from mlpgen.measure import device_problem, gpu_us
from mlpgen.selfcheck import load_module

H200 = "NVIDIA H200|sm90|132"


def main(path: Path, batches: list[int]) -> None:
    spec = read_module(path)[0]
    mod = load_module(path)
    cells = mod.TUNED[H200]
    for m in batches:
        cell = cells[m]
        x, w, b = device_problem(spec, m, "cuda", 3)
        times = [gpu_us(lambda: mod._launch(x, w, b, cell)) for _ in range(5)]
        print(f"{path.stem} {m:>7} {cell['kernel'] or cell['strategy']:<28} table {cell['us']:8.2f}"
              f"  now {statistics.median(times):8.2f}  (rounds {min(times):.2f}-{max(times):.2f})",
              flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), [int(b) for b in sys.argv[2:]])
