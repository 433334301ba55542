"""Session 9: pick a module's winners again from its trial log under the tuner's current rules
(tune.pick_winner, pick_graph_winner), without a GPU: the measurements are the log's own.
Used once, after the host-time floor became per launch path instead of per strategy, on the
headline module run60 wrote (its log holds run47's, run51's and run60's measurements).
Prints each bucket whose cell changes and rewrites the module in place.
Run from the repository root: python3 docs/h200/s9/rejudge.py tuned/<name>.py"""

import json
import sys
from pathlib import Path

from mlpgen.emit import atomic_write, read_module, render
from mlpgen.trials import bucket_records, trial_log_path
from mlpgen.tune import BucketResult, pick_graph_winner, pick_winner, winners_table


def main(path: Path) -> None:
    spec, tuned, provenance = read_module(path)
    log = json.loads(trial_log_path(path).read_text())
    for key, gpu in log["gpus"].items():
        results = {}
        for b, rec in gpu["buckets"].items():
            records = bucket_records(rec)
            winner = pick_winner(records)
            eager = next((m for c, m in records if c.strategy == "torch" and m.ok), None)
            graph = pick_graph_winner(records, winner)
            results[int(b)] = BucketResult(int(b), None, winner, eager, graph, [], len(records))
        table = winners_table(results)
        for b, cell in sorted(table.items()):
            old = tuned[key].get(b)
            if old != cell:
                print(f"{key} {b}: {old and old.get('kernel')} -> {cell['kernel']}"
                      f" (graph: {old and old.get('graph_kernel')} -> {cell.get('graph_kernel')})")
        tuned[key] = {**tuned[key], **table}
    atomic_write(path, render(spec, tuned, provenance))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
