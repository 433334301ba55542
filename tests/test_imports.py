"""mlpgen's modules import one another without a cycle: every `import mlpgen...` counts, at the top
of a file or inside a function alike (a deferred import only hides a cycle), except those under
`if TYPE_CHECKING:`, which only type checkers run, and those of a module's own parent packages
(Python initialises a package before any of its modules anyway)."""

import ast
from pathlib import Path

import pytest

import mlpgen

ROOT = Path(mlpgen.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return (
        ".".join(("mlpgen", *parts[:-1]))
        if parts[-1] == "__init__"
        else ".".join(("mlpgen", *parts))
    )


def imported(tree: ast.AST, modules: set[str], name: str = "") -> set[str]:
    """The mlpgen modules that module `name` (its syntax tree) imports: a package's submodule
    where `from pkg import sub`; not its own parent packages."""
    found = set()
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            skip |= {id(n) for n in ast.walk(node)}
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom) and node.module in modules and node.level == 0:
            subs = {f"{node.module}.{a.name}" for a in node.names} & modules
            found |= subs if subs else {node.module}
            if len(subs) < len(node.names):  # names defined by the module itself
                found.add(node.module)
    return {m for m in found if not name.startswith(m + ".")}


def import_graph() -> dict[str, set[str]]:
    paths = sorted(ROOT.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {
        module_name(p): imported(ast.parse(p.read_text()), modules, module_name(p)) for p in paths
    }


def cycle_in(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a path that returns to its start, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_package_imports_without_a_cycle():
    graph = import_graph()
    assert len(graph) > 30 and graph["mlpgen.spec"] >= {"mlpgen.strategies"}
    assert cycle_in(graph) is None, " -> ".join(cycle_in(graph))


@pytest.mark.parametrize(
    "graph, cycle",
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
        ({"a": set(), "b": {"b"}}, ["b", "b"]),
    ],
)
def test_cycle_in_finds_a_cycle_where_there_is_one(graph, cycle):
    assert cycle_in(graph) == cycle


def test_a_deferred_import_counts_and_a_type_checking_one_does_not():
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from mlpgen.spec import MLPSpec\n"
        "def f():\n    from mlpgen.tune import run\n"
    )
    modules = {"mlpgen", "mlpgen.spec", "mlpgen.tune"}
    assert imported(ast.parse(source), modules, "mlpgen.emit") == {"mlpgen.tune"}
    parent = "import mlpgen\nfrom mlpgen import tune\n"
    assert imported(ast.parse(parent), modules, "mlpgen.emit") == {"mlpgen.tune"}
    assert imported(ast.parse(parent), modules, "mlpgen_other") == {"mlpgen", "mlpgen.tune"}
