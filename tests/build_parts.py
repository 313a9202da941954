"""`make test` runs the suite in two parts: what needs no built program, while the programs
build, then what needs them.

A test needs a built program (the control plane's, the real operators', the real node's and
its images, all built by `make test` into the cache) when it reaches one of the fixtures in
`BUILT`, which are the only way to them:

- directly or through other fixtures (its fixture closure);
- through `request.getfixturevalue("name")` in one of those fixtures, with the name written
  out; in a parametrized fixture this counts only on its real side (below);
- or through a parametrized fixture whose parameter for the test is one of `REAL_PARAMS`:
  the `fakecluster` / `controlplane` (`fake` / `real`) backends ask for the control plane
  only on their real side.

`--part=before-builds` runs every test that needs none of them; `--part=after-builds` every
other test; without `--part` (the default, `all`) the whole suite runs, as before. The two parts
are a predicate and its negation over the same collection, so each test runs exactly once; a
test added later lands in its part by what it uses, without a marker. A test that reaches a
built program by a way this module does not see (a fixture name it cannot read) fails in the
first part, naming this module, instead of skipping: the fixtures of `BUILT` call `after_builds`.

`tests/conftest.py` imports the hooks below, which makes them the suite's.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any

import pytest

#: The fixtures that reach what `make test` builds (tests/conftest.py defines them).
BUILT = frozenset({"controlplane_binaries", "real_node_ready", "operator_builds"})
#: A parametrized fixture's parameters that mean "on the real control plane".
REAL_PARAMS = frozenset({"controlplane", "real"})
PARTS = ("all", "before-builds", "after-builds")
_DYNAMIC = re.compile(r"""getfixturevalue\(\s*["']([A-Za-z_]\w*)["']\s*\)""")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--part",
        choices=PARTS,
        default="all",
        help="before-builds: the tests that need no built program (control plane, operators, "
        "real node); after-builds: the others; all (default): every test",
    )


def _requested_by_name(func: Callable[..., Any]) -> list[str]:
    """The fixture names `func` asks for with `request.getfixturevalue("...")`."""
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        return []
    return _DYNAMIC.findall(source)


def _definitions(item: pytest.Item, name: str) -> Sequence[Any]:
    info = getattr(item, "_fixtureinfo", None)
    found = info.name2fixturedefs.get(name) if info is not None else None
    if found is None:
        found = item.session._fixturemanager.getfixturedefs(name, item)
    return found or ()


def _is_fixture(item: pytest.Item, name: str) -> bool:
    """Whether `name` is a fixture of `item`, not an argument of `pytest.mark.parametrize`
    (which pytest serves through a stand-in fixture of its own)."""
    return any(
        getattr(d.func, "__module__", "") != "_pytest.python" for d in _definitions(item, name)
    )


def _params(item: pytest.Item) -> dict[str, object]:
    callspec = getattr(item, "callspec", None)
    return dict(callspec.params) if callspec is not None else {}


def _is_real(value: object) -> bool:
    return isinstance(value, str) and value in REAL_PARAMS


def reached(item: pytest.Item) -> dict[str, list[Any]]:
    """Every fixture `item` uses (name -> the definitions used), those asked for by name
    included: always in a fixture the test does not parametrize, and in a parametrized one
    only on its real side."""
    params = _params(item)
    found: dict[str, list[Any]] = {}

    def visit(name: str, definitions: Sequence[Any]) -> None:
        if not definitions:
            return
        definition = definitions[-1]
        used = found.setdefault(name, [])
        if any(d is definition for d in used):
            return
        used.append(definition)
        requested: list[str] = list(definition.argnames)
        if name not in params or _is_real(params[name]):
            requested += _requested_by_name(definition.func)
        for other in requested:
            # A fixture that asks for its own name gets the definition it overrides.
            visit(other, definitions[:-1] if other == name else _definitions(item, other))

    for name in getattr(item, "fixturenames", ()):
        visit(name, _definitions(item, name))
    return found


def needs_builds(item: pytest.Item) -> bool:
    """Whether `item` reaches a built program (see the module's docstring)."""
    if any(_is_real(v) and _is_fixture(item, n) for n, v in _params(item).items()):
        return True
    return not BUILT.isdisjoint(reached(item))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    part = config.getoption("part")
    if part == "all":
        return
    wanted = part == "after-builds"
    keep = [item for item in items if needs_builds(item) == wanted]
    dropped = [item for item in items if needs_builds(item) != wanted]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def after_builds(request: pytest.FixtureRequest, what: str) -> None:
    """Fail the test if it runs in the part before the builds: `needs_builds` missed it."""
    if request.config.getoption("part") == "before-builds":
        pytest.fail(
            f"{request.node.nodeid} needs {what}, which `make test` builds beside the first "
            "part of the suite, but it was put in that part (--part=before-builds): "
            "tests/build_parts.py does not see how it reaches them. Reach them through a "
            f"fixture of BUILT ({', '.join(sorted(BUILT))}), by name, or through a parameter "
            f"named {' or '.join(sorted(REAL_PARAMS))}.",
            pytrace=False,
        )
