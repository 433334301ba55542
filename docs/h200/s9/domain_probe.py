"""Session 9 probe: are there faster split and chain tiles for the headline's small buckets
outside the shipped domains? The GPU-time target of issue 4 (5-6 us at 1024 rows; the least
found is chain's 6.46) and the CUDA-graph one (0.5x eager's graph; split's 4.42 us at batch 1)
are missed by ~0.5 us. Pins space.DOMAINS to wider tables, then runs the tuner exhaustively
(mlpgen --exhaustive: every candidate verified and timed, GPU time by CUDA-graph replay of 20
calls) twice into OUT: split at 1 and 64 rows, chain (with the shipped 1024-row split tile) at
1024; prints each bucket's six fastest configs per strategy by GPU time, the shipped tiles are
among the candidates.
Run from the repository root: python3 docs/h200/s9/domain_probe.py OUT"""

import json
import sys
from pathlib import Path

from mlpgen import space
from mlpgen.cli import main as mlpgen

SPLIT = {  # at 1 and 64 rows; the shipped tile is m16 c32 n256 k128 w4
    "block_m": (16,),
    "chunk": (16, 32, 64, 128),
    "block_n": (128, 256),
    "block_k": (64, 128, 256),
    "num_warps": (4, 8),
    "num_stages": (1,),
}
CHAIN = {  # at 1024 rows; the shipped graph tile is m64 n32 k64 w4 s3
    "block_m": (16, 32, 64),
    "block_n": (32, 64, 128),
    "block_k": (32, 64),
    "num_warps": (2, 4),
    "num_stages": (3, 4),
}
SHIPPED_SPLIT_1024 = {  # the shipped 1024-row call winner, for comparison in the same run
    "block_m": (16,), "chunk": (128,), "block_n": (128,), "block_k": (128,),
    "num_warps": (8,), "num_stages": (1,),
}
RUNS = [("split", "1,64", {"split": SPLIT, "torch": {}}),
        ("chain", "1024", {"chain": CHAIN, "split": SHIPPED_SPLIT_1024, "torch": {}})]


def tile(c):
    keys = ("block_m", "chunk", "block_n", "block_k", "num_warps", "num_stages")
    return " ".join(f"{k}={c[k]}" for k in keys if k in c)


def main(out: Path) -> int:
    for name, batches, domains in RUNS:
        space.DOMAINS.clear()
        space.DOMAINS.update(domains)
        folder = out / name
        rc = mlpgen(["--widths", "256,512,256", "--act", "gelu", "--batches", batches,
                     "--exhaustive", "--out", str(folder)])
        if rc:
            return rc
        log = json.loads((folder / "mlp_256x512x256_gelu_fp16.trials.json").read_text())
        for entry in log["gpus"].values():
            for bucket, b in entry["buckets"].items():
                print(f"== {bucket} rows: {b['measured']} measured, eager {b['eager_us']:.2f} us")
                ok = [t for t in b["trials"] if t.get("verdict") == "ok" and t.get("us")]
                for strategy in domains:
                    best = sorted((t for t in ok if t["config"]["strategy"] == strategy),
                                  key=lambda t: t["us"])[:6]
                    for t in best:
                        print(f"  {strategy:6s} {t['us']:7.2f} us  host {t.get('host_us') or 0:6.2f}"
                              f"  {tile(t['config'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
