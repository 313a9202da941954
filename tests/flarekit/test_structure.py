"""The shape of the package: no import cycles, between modules or between subpackages.

Every import counts, function-local ones included (they only postpone a cycle); imports
under ``if TYPE_CHECKING:`` do not, since they never run. The emulator (`flarekit_testing`)
imports no production code but `flarekit_testing` itself.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import flarekit

ROOT = Path(flarekit.__file__).parent
EMULATOR = "flarekit_testing"


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = ("flarekit", *path.relative_to(ROOT).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements that run (anywhere but under ``if TYPE_CHECKING:``)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in _runtime_imports_of(child))
            continue
        yield from _runtime_imports_of(node)


def _runtime_imports_of(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    else:
        yield from _runtime_imports(node)


def _owner(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, path in MODULES.items():
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif node.module and node.level == 0:
                subs = [f"{node.module}.{alias.name}" for alias in node.names]
                targets = [t for t in subs if t in MODULES] or [node.module]
            else:
                continue
            for target in targets:
                owner = _owner(target) if target.startswith("flarekit") else None
                if owner is not None and owner != name:
                    graph[name].add(owner)
    return graph


def _package(name: str) -> str:
    return ".".join(name.split(".")[:2])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_through_others() -> None:
    assert cycles(import_graph()) == []


def test_no_subpackage_cycles() -> None:
    packages: dict[str, set[str]] = {}
    for name, targets in import_graph().items():
        packages.setdefault(_package(name), set()).update(
            _package(t) for t in targets if _package(t) != _package(name)
        )
    assert cycles(packages) == []


def test_the_emulator_imports_only_itself() -> None:
    outside = {
        (name, target)
        for name, targets in import_graph().items()
        if name.startswith(EMULATOR)
        for target in targets
        if not target.startswith(EMULATOR) and target != "flarekit"
    }
    assert outside == set()


def test_the_check_sees_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_client_layer_imports_no_facade() -> None:
    # flarekit.client is the one road to the API server; it knows nothing of clusters, jobs
    # or queues (product names and labels are constants in flarekit._products; flarekit._lazy
    # loads its public names on first use; bad input is a flarekit._validation.ConfigError,
    # whose quantity checks live in flarekit._quantity; the JSON value type is
    # flarekit._json, the metadata reader shared with the facade flarekit._objects).
    allowed = (
        "flarekit.client",
        "flarekit._products",
        "flarekit._lazy",
        "flarekit._validation",
        "flarekit._quantity",
        "flarekit._json",
        "flarekit._objects",
    )
    outside = {
        (name, target)
        for name, targets in import_graph().items()
        if name.startswith("flarekit.client")
        for target in targets
        if not target.startswith(allowed)
    }
    assert outside == set()
