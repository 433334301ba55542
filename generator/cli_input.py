"""The command line's input, checked: every bad argument is a UsageError of one line (exit 2)
raised before anything is written. Numbers are ASCII digits, finite and within bounds; paths are
usable and their folders writable before a long run starts; a file given as a module is an
mlpgen module (read with `ast`, never executed here); recorded runs are checked field by field.

The standard library only at import (mlpgen.module_file is): `mlpgen` starts within
milliseconds, so that a Ctrl-C while torch loads is caught.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from mlpgen.module_file import checked_module, one_line, short

if TYPE_CHECKING:
    from mlpgen.spec import MLPSpec

MAX_WIDTHS = 65  # 64 layers
MAX_BATCH = 1 << 22  # rows of one forward (a bucket, --batch)
MAX_BUCKETS = 64
MAX_TRIALS = 100_000
MAX_WORKERS = 256
MAX_SEED = 1_000_000  # the tuner derives per-study seeds from it: they must stay below 2**32
MAX_SECONDS = 7 * 24 * 3600.0
MAX_JSON_BYTES = 64 << 20
MAX_PATH = 4096


class UsageError(Exception):
    """Bad command-line input: reported in one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    search: Flags | None = None  # the search flags of mlpgen's generate command

    def __init__(self, **kw) -> None:
        kw.setdefault("allow_abbrev", False)
        kw.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(**kw)

    def error(self, message: str):  # argparse would print usage and exit; we want one line
        raise UsageError(message)


class Flags:
    """An argument group (a section of --help) that lists the flags added to it, which argparse
    keeps private: a command refuses a group's flags where they would do nothing."""

    def __init__(self, p: argparse.ArgumentParser, title: str):
        self.parser, self.group = p, p.add_argument_group(title)
        self.actions: list[argparse.Action] = []

    def add_argument(self, *args, **kw) -> argparse.Action:
        self.actions.append(self.group.add_argument(*args, **kw))
        return self.actions[-1]

    def given(self, args: argparse.Namespace) -> list[str]:
        """The flags set to other than their default (a flag given its default goes unseen)."""
        default = self.parser.get_default
        return [
            a.option_strings[0] for a in self.actions if getattr(args, a.dest) != default(a.dest)
        ]


# ---------------------------------------------------------------------------------------------
# Numbers: ASCII digits, finite, within bounds

INT = re.compile(r"-?[0-9]+")
FLOAT = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def ascii_int(text: str, what: str, lo: int, hi: int) -> int:
    t = text.strip()
    if not INT.fullmatch(t) or len(t) > 30:
        raise UsageError(f"{what} {short(text)}: expected an integer written in ASCII digits")
    value = int(t)
    if not lo <= value <= hi:
        raise UsageError(f"{what} {short(text)}: out of range {lo}..{hi}")
    return value


def integer(lo: int, hi: int):
    def parse(text: str) -> int:
        try:
            return ascii_int(text, "", lo, hi)
        except UsageError as e:
            raise argparse.ArgumentTypeError(str(e).strip()) from None

    return parse


def seconds(text: str) -> float:
    t = text.strip()
    value = float(t) if FLOAT.fullmatch(t) and len(t) <= 30 else math.nan
    if not math.isfinite(value) or not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(
            f"{short(text)}: expected a finite number of seconds in (0, {MAX_SECONDS:g}]"
        )
    return value


def parse_batches(text: str) -> tuple[int, ...]:
    items = text.split(",")
    if len(items) > MAX_BUCKETS:
        raise UsageError(f"--batches: {len(items)} batch sizes, at most {MAX_BUCKETS}")
    batches = set()
    for t in items:
        value = ascii_int(t, "--batches", -(10**30), 10**30)
        if not 1 <= value <= MAX_BATCH:
            raise UsageError(
                f"--batches {short(t)}: batch sizes must be positive and at most {MAX_BATCH}"
            )
        batches.add(value)
    return tuple(sorted(batches))


def batches_arg(text: str) -> tuple[int, ...]:
    try:
        return parse_batches(text)
    except UsageError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--batches ")) from None


def parse_widths(text: str) -> tuple[int, ...]:
    """'256,512,256' -> (256, 512, 256); anything else is one line naming the bad entry."""
    from mlpgen.spec import MAX_WIDTH

    items = text.split(",")
    if not text.strip() or any(not t.strip() for t in items):
        raise UsageError(f"--widths {short(text)}: expected comma-separated integers like 256,512")
    if len(items) > MAX_WIDTHS:
        raise UsageError(f"--widths: {len(items)} widths, at most {MAX_WIDTHS} (64 layers)")
    widths = []
    for t in items:
        if not INT.fullmatch(t.strip()):
            raise UsageError(f"--widths: {short(t)} is not an integer in ASCII digits")
        widths.append(ascii_int(t, "--widths: width", 1, MAX_WIDTH))
    if len(widths) < 2:
        raise UsageError("--widths needs at least 2 entries (inputs and outputs), got 1")
    return tuple(widths)


def one_of(choices, what: str):
    def parse(text: str) -> str:
        if text not in choices:
            raise UsageError(f"unknown {what} {short(text)}; choose from {', '.join(choices)}")
        return text

    return parse


# ---------------------------------------------------------------------------------------------
# Paths: checked before anything is written


def checked_path(text: str, flag: str) -> Path:
    """A path argument that the OS can take: not empty, no NUL, within the length limits."""
    if not text:
        raise UsageError(f"{flag}: empty path")
    if "\0" in text or len(text) > MAX_PATH:
        raise UsageError(f"{flag} {short(text)}: not a usable path")
    if any(len(part.encode(errors="surrogateescape")) > 255 for part in Path(text).parts):
        raise UsageError(f"{flag} {short(text)}: a name in it is longer than 255 bytes")
    return Path(text)


def probe(path: Path, flag: str) -> bool:
    """path.exists(), with an unusable path (ENAMETOOLONG, ELOOP, EACCES) a usage error."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return False
    except NotADirectoryError:
        raise UsageError(f"{flag} {short(path)}: a part of it is not a folder") from None
    except OSError as e:
        raise UsageError(f"{flag} {short(path)}: {e.strerror}") from None
    return True


def checked_out_dir(text: str) -> Path:
    """The output folder, refused now (nothing written) if it cannot become one."""
    out = checked_path(text, "--out")
    if probe(out, "--out") and not out.is_dir():
        raise UsageError(f"--out {short(text)}: exists and is not a folder")
    folder = out
    while not probe(folder, "--out"):
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"--out {short(text)}: {short(folder)} is not a writable folder")
    return out


def output_file(text: str | None, flag: str) -> Path | None:
    """A file to write at the end of a long run: refused now if its folder is missing."""
    if text is None:
        return None
    path = checked_path(text, flag)
    if probe(path, flag) and path.is_dir():
        raise UsageError(f"{flag} {short(text)}: is a folder")
    parent = path.parent
    if not probe(parent, flag) or not parent.is_dir():
        raise UsageError(f"{flag} {short(text)}: {short(parent)} is not an existing folder")
    try:  # a file made and removed: permissions alone miss read-only and virtual filesystems
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".mlpgen-probe-"):
            pass
    except OSError:
        raise UsageError(f"{flag} {short(text)}: {short(parent)} is not writable") from None
    return path


def checked_storage(text: str | None) -> None:
    """--storage: a database URL must name a database SQLAlchemy knows (a SQLite file's folder
    must exist); a journal file's folder must exist. Checked now, not after the compile phase."""
    if text is None:
        return
    if "://" not in text:
        output_file(text, "--storage")
        return
    if len(text) > MAX_PATH or "\0" in text:
        raise UsageError(f"--storage {short(text)}: not a usable URL")
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        url = make_url(text)
        dialect = url.get_dialect()
    except (ArgumentError, NoSuchModuleError, ValueError):
        raise UsageError(f"--storage {short(text)}: not a database URL Optuna can open") from None
    try:
        dialect.import_dbapi()
    except ImportError as e:
        raise UsageError(f"--storage {short(text)}: its database driver is missing ({e})") from None
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        output_file(url.database, "--storage")


# ---------------------------------------------------------------------------------------------
# Modules: read with ast, checked, never executed here


def existing_module(text: str) -> tuple[Path, MLPSpec, dict, dict]:
    """The module at `text`, checked without running it (mlpgen.module_file.checked_module).
    Returns (path, spec, tuned, provenance); any damage is one line."""
    path = checked_path(text, "module")
    name = short(text)
    if not probe(path, "module"):
        raise UsageError(f"{name}: no such file")
    if not path.is_file():
        raise UsageError(f"{name}: not a regular file")
    from mlpgen.spec import SpecError

    try:
        spec, tuned, provenance = checked_module(path, name)
    except SpecError as e:
        raise UsageError(str(e)) from None
    return path, spec, tuned, provenance


def load_runs(files: list[str], flag: str) -> dict:
    """Recorded `mlpgen bench --json` runs, checked and merged; bad ones are one line."""
    from mlpgen import bench, report

    runs = []
    for text in files:
        path = checked_path(text, flag)
        if not probe(path, flag):
            raise UsageError(f"{flag} {short(text)}: no such file")
        if not path.is_file():
            raise UsageError(f"{flag} {short(text)}: not a regular file")
        if path.stat().st_size > MAX_JSON_BYTES:
            raise UsageError(f"{flag} {short(text)}: larger than {MAX_JSON_BYTES >> 20} MiB")
        try:
            data = json.loads(path.read_bytes().decode("utf-8"))
        except OSError as e:
            raise UsageError(f"{flag} {short(text)}: {e.strerror}") from None
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise UsageError(f"{flag} {short(text)}: not JSON") from None
        problem = run_damage(data)
        if problem:
            what = "not an `mlpgen bench --json` result"
            raise UsageError(f"{flag} {short(text)}: {what}: {problem}")
        runs.append(data)
    try:
        merged = bench.merge_runs(runs)
        report.bench_text(merged)  # every field the reports read is there
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
        raise UsageError(f"{flag}: {one_line(e)}") from None
    return merged


def run_damage(data: object) -> str | None:
    if not isinstance(data, dict):
        return f"a {type(data).__name__}, not an object"
    if not isinstance(data.get("name"), str):
        return "no module name"
    results = data.get("results")
    if not isinstance(results, list) or not results:
        return "no results"
    for r in results:
        if not isinstance(r, dict):
            return "a result that is not an object"
        batch = r.get("batch")
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            return f"batch {short(batch, 30)} is not a positive integer"
        if not isinstance(r.get("contender"), str) or not isinstance(r.get("status"), str):
            return "a result without contender or status"
        for k, v in r.items():
            if k.endswith("_us") and v is not None:
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    return f"{short(k, 30)} is not a finite number"
    return None
