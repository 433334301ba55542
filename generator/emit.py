"""Write the standalone module: build its TUNED/PROVENANCE tables, read them back from an existing
module, merge a GPU's winners in, and replace the file atomically under a lock."""

from __future__ import annotations

import ast
import contextlib
import datetime
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from filelock import FileLock, Timeout

import mlpgen
from mlpgen.dispatch import GRAPH
from mlpgen.render import generate_command, render_module, template_hash
from mlpgen.space import DEFAULT_BUCKETS, heuristic_config
from mlpgen.spec import KernelConfig, MLPSpec, SpecError
from mlpgen.strategies import RETIRED, upgrade_cell

DEFAULT_KEY = "default"


def entry(config: KernelConfig, **times: float) -> dict:
    """One TUNED cell: the config, its kernel's name and its measured times (µs)."""
    d = config.to_dict()
    d["kernel"] = config.kernel_name
    d.update({k: round(v, 3) for k, v in times.items()})
    return d


LEGACY_GRAPH = "graph_"  # earlier modules stored the CUDA-graph sub-cell as prefixed fields


def with_graph_winner(cell: dict, config: KernelConfig, us: float) -> dict:
    """`cell` plus the config to run instead while a CUDA graph is being captured (the least
    GPU time; replays have no host cost), as its "graph" sub-cell."""
    return cell | {GRAPH: entry(config, us=us)}


def graph_cell(cell: dict) -> dict | None:
    """The CUDA-graph sub-cell of a TUNED cell (with_graph_winner), or None."""
    return cell.get(GRAPH)


# config fields of earlier versions (GELU's erf is no longer searched)
RETIRED_FIELDS = ("fast_erf",)


def current_cell(cell: dict, default: Callable[[], dict]) -> dict:
    """A TUNED cell as this version writes it: an earlier version's graph_-prefixed fields
    moved into the "graph" sub-cell, retired config fields dropped and the kernel names
    re-derived, so a module from an earlier mlpgen re-renders with matching kernels. A cell of
    a retired strategy becomes default() (the bucket's heuristic default; its "train" kept),
    a CUDA-graph sub-cell of one goes (the call's cell serves captures)."""
    flat = {k: v for k, v in cell.items() if not k.startswith(LEGACY_GRAPH) and k != GRAPH}
    graph = cell.get(GRAPH)
    if graph is None and LEGACY_GRAPH + "strategy" in cell:
        n = len(LEGACY_GRAPH)
        graph = {k[n:]: v for k, v in cell.items() if k.startswith(LEGACY_GRAPH)}
    flat = upgrade_cell(flat)  # earlier strategies' names and fields
    if flat.get("strategy") in RETIRED:  # its kernels are gone
        flat = default() | ({"train": flat["train"]} if "train" in flat else {})
    out = {k: v for k, v in flat.items() if k not in RETIRED_FIELDS}
    out["kernel"] = KernelConfig.from_dict(out).kernel_name
    graph = None if graph is None else upgrade_cell(graph)
    if graph is not None and graph.get("strategy") not in RETIRED:
        out[GRAPH] = current_cell(graph, default)
    return out


def kernel_text(cell: dict) -> str:
    """What a TUNED cell runs, in a word: its kernel's name (+ " (PDL)" where consecutive calls
    are linked by programmatic dependent launch), or the kernel-free path."""
    if cell.get("kernel"):
        return cell["kernel"] + (" (PDL)" if cell.get("pdl") else "")
    return "cuBLASLt epilogue" if cell["strategy"] == "epilogue" else "torch (unfused)"


def default_cell(spec: MLPSpec, bucket: int) -> dict:
    return entry(heuristic_config(spec, bucket))


def default_table(spec: MLPSpec, buckets=DEFAULT_BUCKETS) -> dict[int, dict]:
    return {b: default_cell(spec, b) for b in buckets}


def scalar_literal(value) -> str:
    """A scalar as Python source, strings double-quoted (the project's formatting style)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(scalar_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return leaf_literal(sorted(value.items()))
    return repr(value)


def leaf_literal(items) -> str:
    """(key, value) pairs of a dict as one line of Python source (nested dicts inline)."""
    return "{" + ", ".join(f"{scalar_literal(k)}: {scalar_literal(v)}" for k, v in items) + "}"


def format_literal(obj, indent: int = 0) -> str:
    """A Python literal with sorted keys, one TUNED cell per line: re-tuning a bucket changes
    one line of the module, so its diff reads cleanly."""
    pad = " " * (indent + 4)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = sorted(obj.items(), key=lambda kv: (str(type(kv[0])), kv[0]))
        if "strategy" in obj or "command" in obj or all(not isinstance(v, dict) for _, v in items):
            return leaf_literal(items)  # a cell, a GPU's provenance, a flat dict: one line
        body = "".join(
            f"{pad}{scalar_literal(k)}: {format_literal(v, indent + 4)},\n" for k, v in items
        )
        return "{\n" + body + " " * indent + "}"
    return scalar_literal(obj)


def module_path(out_dir: Path, spec: MLPSpec) -> Path:
    """Where the module of `spec` lives in `out_dir` (a long name is shortened: file_stem)."""
    return Path(out_dir) / f"{spec.file_stem}.py"


def literal_nodes(tree: ast.Module) -> dict[str, ast.expr]:
    """The value expressions of a module's top-level SPEC, TUNED and PROVENANCE assignments."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id in ("SPEC", "TUNED", "PROVENANCE"):
                found[target.id] = node.value
    return found


def read_module(path: Path) -> tuple[MLPSpec, dict, dict]:
    """SPEC, TUNED and PROVENANCE of a generated module, read without importing it."""
    try:
        tree = ast.parse(Path(path).read_text())
    except (OSError, SyntaxError) as e:
        raise SpecError(f"{path}: cannot read a generated module ({e.__class__.__name__})") from e
    found = {name: ast.literal_eval(value) for name, value in literal_nodes(tree).items()}
    if "SPEC" not in found or "TUNED" not in found:
        raise SpecError(f"{path}: not an mlpgen module (no SPEC/TUNED)")
    spec = MLPSpec.from_dict(found["SPEC"])
    tuned = {
        key: {b: current_cell(cell, partial(default_cell, spec, b)) for b, cell in table.items()}
        for key, table in found["TUNED"].items()
    }
    provenance = found.get("PROVENANCE", {})
    for key, table in found["TUNED"].items():  # say which cells its command no longer made
        retired = sorted(b for b, c in table.items() if upgrade_cell(c).get("strategy") in RETIRED)
        if retired and key in provenance:
            provenance[key] = provenance[key] | {"heuristic_default_at": retired}
    return spec, tuned, provenance


def tune_command(spec: MLPSpec, prov: dict) -> str:
    """The mlpgen command line that a GPU's provenance describes (its search options): a
    search seeded by the GPU's earlier cells was a retune of the module."""
    cmd = f"mlpgen retune {spec.name}.py" if prov.get("seeded") else generate_command(spec)
    if prov.get("buckets"):
        cmd += f" --batches {','.join(map(str, prov['buckets']))}"
    if prov.get("exhaustive"):
        cmd += " --exhaustive"
    elif prov.get("trials"):
        cmd += f" --trials {prov['trials']}"
    if prov.get("train"):
        cmd += " --train"
    for option in ("seed", "timeout", "workers"):
        if prov.get(option) is not None:
            cmd += f" --{option} {prov[option]}"
    return cmd


def render(spec: MLPSpec, tuned: dict, provenance: dict, op: bool = True) -> str:
    """The module's source; each GPU's provenance names the command that made it. op=False
    leaves out the registration of its torch.compile op (OP is None, as on a torch without
    triton_op): for the tuner's candidate modules, which are only ever called eagerly, since
    a registration costs about 60 ms per module and imports torch._dynamo into the process.
    """
    provenance = {
        key: {**prov, "command": tune_command(spec, prov)} for key, prov in provenance.items()
    }
    cells = [c for table in tuned.values() for c in table.values()]
    cells += [g for g in map(graph_cell, cells) if g is not None]
    configs = [KernelConfig.from_dict(c) for c in cells]
    header = {
        "version": mlpgen.__version__,
        "template_hash": template_hash(),
        "date": datetime.date.today().isoformat(),
    }
    return render_module(
        spec,
        configs,
        format_literal(tuned),
        format_literal(provenance),
        header,
        leaf_literal(spec.to_dict().items()),
        op=op,
    )


STALE_S = 3600.0
TEMP = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp$")  # atomic_write's temp file names


def file_mode(path: Path) -> int:
    """The mode a rewritten file gets: the existing file's, else a new file's (0666 less umask)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return 0o666 & ~current_umask()


def current_umask() -> int:
    """The process umask, read without changing it where Linux shows it (os.umask can only be
    read by setting it, which races with other threads creating files)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def remove_stale_temps(folder: Path, own: str | None = None) -> None:
    """Delete temp files that killed writers left in `folder`: `own`'s (the caller holds its
    lock, so no live writer owns them), any other name's whose lock is free right now, and
    those of unlocked writes (no lock file) older than STALE_S."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for e in entries:
        m = TEMP.match(e.name)
        if m is None:
            continue
        name = m["name"]
        if name == own:
            with contextlib.suppress(OSError):
                os.unlink(e.path)
            continue
        lock = lock_for(Path(folder) / name)
        if not os.path.exists(lock.lock_file):  # a writer without a lock: judge by age
            with contextlib.suppress(OSError):
                if time.time() - e.stat().st_mtime > STALE_S:
                    os.unlink(e.path)
            continue
        try:
            lock.acquire(timeout=0)
        except (Timeout, OSError):
            continue  # a live writer (or an unlockable folder): leave it
        try:
            with contextlib.suppress(OSError):
                os.unlink(e.path)
        finally:
            lock.release()


def atomic_write(path: Path, text: str) -> None:
    """Write via a temp file in the same folder and os.replace: readers never see half a file.

    The file keeps its mode (a new one gets the umask's); a symlink keeps pointing at its
    target, which is what gets replaced. The temp file goes on every exit path Python sees;
    one left by a SIGKILL is removed by the next write of that file (remove_stale_temps).
    """
    target = Path(os.path.realpath(path))
    mode = file_mode(target)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            os.fchmod(f.fileno(), mode)
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def lock_for(path: Path) -> FileLock:
    """The lock that serialises writers of `path` (a hidden file beside it; a symlink's target
    is the file locked)."""
    path = Path(os.path.realpath(path))
    return FileLock(str(path.parent / f".{path.name}.lock"))


def write_module(
    path: Path,
    spec: MLPSpec,
    gpu_key: str | None = None,
    table: dict[int, dict] | None = None,
    provenance: dict | None = None,
    buckets=DEFAULT_BUCKETS,
    merge: bool = False,
) -> Path:
    """Create or update the module at `path`: refresh the heuristic default (over `buckets` and
    the buckets it had: a run over fewer buckets does not shrink it) and, given a GPU key,
    replace that GPU's table (or, with merge, only the buckets in `table`, and update its
    provenance) while keeping every other GPU's entries."""
    path = Path(path)
    if path.exists():  # refuse before the lock file is made; checked again under the lock
        same_spec(path, spec)
    with lock_for(path):
        remove_stale_temps(Path(os.path.realpath(path)).parent, Path(os.path.realpath(path)).name)
        tuned, prov = {}, {}
        if path.exists():
            tuned, prov = same_spec(path, spec)
        buckets = sorted(set(buckets) | set(tuned.get(DEFAULT_KEY, {})))
        tuned[DEFAULT_KEY] = default_table(spec, buckets)
        if gpu_key is not None:
            keep = merge and gpu_key in tuned
            # a run that re-tunes every bucket of the GPU's table replaces its provenance too:
            # the table then comes from that one run, and the provenance says how
            spliced = keep and not set(tuned[gpu_key]) <= set(table or {})
            tuned[gpu_key] = {**(tuned[gpu_key] if keep else {}), **(table or {})}
            prov[gpu_key] = {**(prov.get(gpu_key, {}) if spliced else {}), **(provenance or {})}
        text = render(spec, tuned, prov)
        if not path.exists() or undated(path.read_text()) != undated(text):
            atomic_write(path, text)  # a module that would change only its date is left alone
    return path


def undated(text: str) -> str:
    """A module's source without the date its header line gives."""
    return re.sub(r"(?m)^(# spec: .*)  written: \S+$", r"\1", text, count=1)


def same_spec(path: Path, spec: MLPSpec) -> tuple[dict, dict]:
    """TUNED and PROVENANCE of the module at `path`, which must be `spec`'s."""
    old_spec, tuned, prov = read_module(path)
    if old_spec != spec:
        raise SpecError(f"{path} holds {old_spec.name}, not {spec.name}")
    return tuned, prov
