"""The shape of the packages: each subpackage's `__init__` is its contract, and no import runs
in a circle.

Read from the source of `flarekit` and `flarekit_testing`, every import counts: at module
level, under ``if TYPE_CHECKING:`` (a circle of types is a circle of the design, even though
it never runs) and inside functions (which only put a circle off until the call).

- No circle between modules, nor between subpackages.
- A private module (a dotted name with a part that starts with an underscore) is seen only
  inside the package that holds it, as a private name is: `flarekit.cluster` imports
  `flarekit.client`, never `flarekit.client._errors`; `flarekit_testing` asks
  `flarekit_models` for its pinned releases, not `flarekit_models._crds`. The root package's
  own private modules (`flarekit._validation`) are shared by its subpackages, which are inside
  it. Nor is a private name imported from another package's public module.
- Imports of the project's modules stand at module level. Loading on first use is done at the
  entry points: a package `__init__`'s ``__getattr__`` (see `flarekit._lazy`).
- The command line and the notebook widgets use the facade's public API alone: no private
  attribute of what it hands them (``shape._header()``).
- The client layer imports no facade.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import flarekit
import flarekit_testing

PROJECT = ("flarekit", "flarekit_testing", "flarekit_models")
ROOTS = (Path(flarekit.__file__).parent, Path(flarekit_testing.__file__).parent)
#: Subpackages whose private attributes the command line and widgets must not touch.
FACADE_USERS = ("flarekit.cli", "flarekit.widgets")


@dataclass(frozen=True)
class Import:
    """One imported module (or name from a module) of the project, where it is written."""

    source: str  # the importing module
    target: str  # the imported module
    name: str | None  # the name taken from it (from-imports), if it is not a module itself
    line: int
    in_function: bool

    def __str__(self) -> str:
        what = f"{self.target}.{self.name}" if self.name else self.target
        return f"{self.source}:{self.line} imports {what}"


def _module_name(root: Path, path: Path) -> str:
    parts = (root.name, *path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def read_sources(roots: tuple[Path, ...] = ROOTS) -> dict[str, tuple[Path, str]]:
    """Module name -> (path, source text) of every module under `roots`."""
    return {
        _module_name(root, path): (path, path.read_text(encoding="utf-8"))
        for root in roots
        for path in sorted(root.rglob("*.py"))
    }


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def imports_of(module: str, path: Path, source: str, modules: set[str]) -> Iterator[Import]:
    """Every import of a project module in `source`, wherever it stands."""
    package = module if _is_package(path) else module.rpartition(".")[0]

    def visit(node: ast.AST, in_function: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.split(".")[0] in PROJECT:
                        yield Import(module, alias.name, None, child.lineno, inside)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                if base.split(".")[0] not in PROJECT:
                    continue
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    if sub in modules:
                        yield Import(module, sub, None, child.lineno, inside)
                    else:
                        yield Import(module, base, alias.name, child.lineno, inside)
            else:
                yield from visit(child, inside)

    yield from visit(ast.parse(source), False)


def all_imports(sources: dict[str, tuple[Path, str]]) -> list[Import]:
    modules = set(sources)
    return [
        found
        for module, (path, source) in sources.items()
        for found in imports_of(module, path, source, modules)
    ]


def _owner(name: str, modules: set[str]) -> str | None:
    """The module of `modules` that `name` is, or is inside."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(sources: dict[str, tuple[Path, str]]) -> dict[str, set[str]]:
    """Module -> the modules of the project it imports (read here), every import counted."""
    modules = set(sources)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for found in all_imports(sources):
        owner = _owner(found.target, modules)
        if owner is not None and owner != found.source:
            graph[found.source].add(owner)
    return graph


def private_scope(name: str) -> str | None:
    """The package inside which the dotted `name` may be used, when it is private: the part
    before its first private segment (``flarekit.client._errors`` -> ``flarekit.client``)."""
    parts = name.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
            return ".".join(parts[:index])
    return None


def _inside(module: str, scope: str) -> bool:
    return module == scope or module.startswith(scope + ".")


def private_reaches(imports: list[Import]) -> list[str]:
    """Imports of a private module, or of a private name, from outside its package."""
    found = []
    for each in imports:
        what = f"{each.target}.{each.name}" if each.name else each.target
        scope = private_scope(what)
        if scope is not None and not _inside(each.source, scope):
            found.append(str(each))
    return sorted(found)


def function_imports(imports: list[Import], sources: dict[str, tuple[Path, str]]) -> list[str]:
    """Project imports inside functions, but for a package `__init__`'s loader."""
    return sorted(
        str(each)
        for each in imports
        if each.in_function and not _is_package(sources[each.source][0])
    )


def _package(name: str, sources: dict[str, tuple[Path, str]]) -> str:
    """The subpackage a module belongs to; a module of the root package (`flarekit._wait`)
    stands for itself, beside the root's `__init__` (the facade's entry point)."""
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


def package_graph(
    graph: dict[str, set[str]], sources: dict[str, tuple[Path, str]]
) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {}
    for name, targets in graph.items():
        own = _package(name, sources)
        packages.setdefault(own, set()).update(
            _package(t, sources) for t in targets if _package(t, sources) != own
        )
    return packages


def private_attributes(module: str, source: str) -> list[str]:
    """``x._name`` uses in `source` where `x` is not ``self``, ``cls`` or a module from
    outside the project (``argparse._SubParsersAction``); IPython's ``_repr_html_`` and
    the like end with an underscore and are public."""
    tree = ast.parse(source)
    outside = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name.split(".")[0] not in PROJECT
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        if node.attr.endswith("_"):
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in {"self", "cls", *outside}:
            continue
        found.append(f"{module}:{node.lineno} {ast.unparse(node)}")
    return found


SOURCES = read_sources()
IMPORTS = all_imports(SOURCES)
GRAPH = import_graph(SOURCES)


def test_both_packages_are_read() -> None:
    assert {"flarekit.cluster._cluster", "flarekit_testing.apiserver._server"} <= set(SOURCES)


def test_no_module_imports_itself_through_others() -> None:
    assert cycles(GRAPH) == []


def test_no_subpackage_cycles() -> None:
    assert cycles(package_graph(GRAPH, SOURCES)) == []


def test_no_import_of_another_packages_private_module() -> None:
    assert private_reaches(IMPORTS) == []


def test_project_imports_stand_at_module_level() -> None:
    assert function_imports(IMPORTS, SOURCES) == []


def test_the_command_line_and_widgets_use_public_names_only() -> None:
    found = [
        use
        for module, (_path, source) in SOURCES.items()
        if any(_inside(module, user) for user in FACADE_USERS)
        for use in private_attributes(module, source)
    ]
    assert found == []


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
        for name, targets in GRAPH.items()
        if name.startswith("flarekit.client")
        for target in targets
        if not target.startswith(allowed)
    }
    assert outside == set()


def test_the_backends_use_flarekits_public_api() -> None:
    # flarekit-testing is a distribution of its own: what it takes from flarekit and the
    # models is what any user may take.
    found = [
        str(each)
        for each in IMPORTS
        if each.source.startswith("flarekit_testing")
        and not each.target.startswith("flarekit_testing")
        and private_scope(f"{each.target}.{each.name or ''}".rstrip(".")) is not None
    ]
    assert found == []


# -- the checks can fail -----------------------------------------------------------------------


def _sample(tmp_path: Path, files: dict[str, str]) -> dict[str, tuple[Path, str]]:
    root = tmp_path / "flarekit"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return read_sources((root,))


def test_the_check_sees_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_check_sees_a_type_level_cycle(tmp_path: Path) -> None:
    sources = _sample(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from flarekit.b import B\n",
            "b.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from flarekit.a import A\nB = 1\n"
            ),
        },
    )
    assert cycles(import_graph(sources)) == [["flarekit.a", "flarekit.b"]]


@pytest.mark.parametrize(
    "text",
    [
        "from flarekit.client._errors import NotFound\n",
        "from flarekit.client import _errors\n",
        "import flarekit.client._errors\n",
        "from flarekit.client import _private_name\n",
        "from flarekit_models._crds import default_releases\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from flarekit.client._client import Client\n",
    ],
)
def test_the_check_sees_a_private_reach(tmp_path: Path, text: str) -> None:
    sources = _sample(
        tmp_path,
        {
            "__init__.py": "",
            "client/__init__.py": "",
            "client/_errors.py": "",
            "client/_client.py": "",
            "cluster/__init__.py": "",
            "cluster/_cluster.py": text,
        },
    )
    assert len(private_reaches(all_imports(sources))) == 1


def test_a_package_sees_its_own_and_its_parents_private_modules(tmp_path: Path) -> None:
    sources = _sample(
        tmp_path,
        {
            "__init__.py": "",
            "_validation.py": "",
            "cluster/__init__.py": "from flarekit.cluster._cluster import Cluster\n",
            "cluster/_cluster.py": "from flarekit._validation import X\nCluster = X\n",
        },
    )
    assert private_reaches(all_imports(sources)) == []


def test_the_check_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    sources = _sample(
        tmp_path,
        {
            "__init__.py": "def __getattr__(name):\n    from flarekit import a\n    return a\n",
            "a.py": "def f():\n    from flarekit import b\n    return b\n",
            "b.py": "",
        },
    )
    assert function_imports(all_imports(sources), sources) == ["flarekit.a:2 imports flarekit.b"]


def test_the_check_sees_a_private_attribute() -> None:
    source = "import argparse\nx = argparse._SubParsersAction\ny = shape._header()\n"
    assert private_attributes("m", source) == ["m:3 shape._header"]
