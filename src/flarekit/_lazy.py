"""Packages whose public names load on first use, listed once.

A package lists its public names as imports under ``if TYPE_CHECKING:`` (``Name as Name``,
the form type checkers read as a re-export); `lazy_names` reads that block, so the same list
drives the loader, ``__all__`` and ``dir()``. Importing the package, or one of its private
modules, then costs nothing until a public name is used.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

__all__ = ["lazy_module"]


@cache
def lazy_names(path: str) -> dict[str, str]:
    """Public name -> defining module, from the TYPE_CHECKING imports of the file at `path`
    (read on first use: parsing costs nothing at import time)."""
    import ast

    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
    )
    return {
        alias.asname or alias.name: str(node.module)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def lazy_module(
    namespace: dict[str, Any], missing: Callable[[str, dict[str, str]], str] | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """(``__getattr__``, ``__dir__``) for the module whose globals are `namespace`;
    `missing(name, public)` words the error for an unknown name."""
    path, module_name = str(namespace["__file__"]), str(namespace["__name__"])

    def __getattr__(name: str) -> Any:
        public = lazy_names(path)
        if name == "__all__":
            namespace["__all__"] = sorted(public)
            return namespace["__all__"]
        source = public.get(name)
        if source is None:
            default = f"module {module_name!r} has no attribute {name!r}"
            raise AttributeError(missing(name, public) if missing is not None else default)
        import importlib

        value = getattr(importlib.import_module(source), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *lazy_names(path)})

    return __getattr__, __dir__
