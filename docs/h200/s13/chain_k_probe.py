"""Session 13 probe: chain at 1024 rows with the whole reduction in one or two k steps.
run56 (session 9) searched chain tiles with block_k 32 and 64 only: the fastest 6.23 us (64 x 64,
4 stages) against the 6 us that issue 4's GPU-time target allows. Here block_k 64, 128 and 256
(one k step for the first layer's 256 inputs), 1 to 4 stages, 4 and 8 warps, exhaustive, with the
shipped graph tile (64 x 32, block_k 64, 3 stages) among them; session 9's domain_probe does the
run and the printing. Run from the repository root: python3 docs/h200/s13/chain_k_probe.py OUT"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "s9"))

import domain_probe  # noqa: E402

CHAIN = {
    "block_m": (32, 64),
    "block_n": (32, 64, 128),
    "block_k": (64, 128, 256),
    "num_warps": (4, 8),
    "num_stages": (1, 2, 3, 4),
}
domain_probe.RUNS = [
    ("chain", "1024", {"chain": CHAIN, "split": domain_probe.SHIPPED_SPLIT_1024, "torch": {}})
]

if __name__ == "__main__":
    sys.exit(domain_probe.main(Path(sys.argv[1])))
