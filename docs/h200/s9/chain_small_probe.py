"""Session 9 probe, after run57 (split's hand-over between programs, a counter atomic and the
last program's reduction, is 1.5 of its 4.6 us at batch 1): does chain (a Triton kernel per
layer, the second PDL-launched and waiting for the first), which hands over through the launch
instead, take less GPU time at 1 and 64 rows? Its buckets are pinned to start at 1 and the
tuner, exhaustive, times 16- and 32-row chain tiles beside the shipped split tile (same run).
Prints each bucket's six fastest configs per strategy (GPU time by CUDA-graph replay of 20
calls). Run from the repository root: python3 docs/h200/s9/chain_small_probe.py OUT"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import domain_probe  # noqa: E402

from mlpgen import space  # noqa: E402

CHAIN_SMALL = {
    "block_m": (16, 32),
    "block_n": (16, 32, 64),
    "block_k": (64, 128),
    "num_warps": (2, 4),
    "num_stages": (2, 3),
}
SHIPPED_SPLIT = {  # the shipped 1- and 64-row call winner
    "block_m": (16,), "chunk": (32,), "block_n": (256,), "block_k": (128,),
    "num_warps": (4,), "num_stages": (1,),
}

if __name__ == "__main__":
    space.CHAIN_BUCKETS = (1, 4096)
    domain_probe.RUNS = [("chain_small", "1,64", {"chain": CHAIN_SMALL, "split": SHIPPED_SPLIT,
                                                   "torch": {}})]
    sys.exit(domain_probe.main(Path(sys.argv[1])))
