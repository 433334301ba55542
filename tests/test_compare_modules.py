"""benchmarks/compare_modules.py's shipping rule: a re-tune replaces a shipped module only where
it is nowhere slower than the limit, rows that run the same config in both excepted."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location(
    "compare_modules", ROOT / "benchmarks/compare_modules.py"
)
compare_modules = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_modules)

HEADER = ["module", "batch", "eager µs", "previous µs", "runtime µs", "public µs"]
HEADER += ["runtime / previous", "public / previous", "same config"]


def row(name, batch, ratio, same):
    return [
        name,
        str(batch),
        "40.0",
        "10.0",
        f"{10 * ratio:.2f}",
        "60.0",
        f"{ratio:.3f}",
        "6.0",
        same,
    ]


def test_a_retune_ships_only_where_no_batch_is_slower_than_the_limit():
    rows = [row("faster", 1, 0.95, "no"), row("faster", 262144, 1.02, "no")]
    rows += [row("slower", 1, 0.90, "no"), row("slower", 16384, 1.138, "no")]
    # one config in both modules: 6% is the measurement's noise, not the re-tune's
    rows += [row("noise", 1, 0.99, "no"), row("noise", 262144, 1.06, "yes")]
    verdicts = compare_modules.ship_verdicts({"header": HEADER, "rows": rows}, 1.03)
    assert verdicts == {"faster": True, "slower": False, "noise": True}
    assert compare_modules.ship_verdicts({"header": HEADER, "rows": rows}, 1.2)["slower"]
