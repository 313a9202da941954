"""Packages whose public names load on first use.

A package's ``__init__`` is its contract. It hands `lazy_module` its public names, each with
the private module that defines it, and lists the same imports under ``if TYPE_CHECKING:``
(``Name as Name``, the form type checkers read as a re-export); tests/flarekit/
test_public_api.py holds the two lists to each other. Importing the package then costs
nothing: the first use of a name imports the one module that defines it, and that module's
own imports (all at its top) come with it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_module"]

Exports = Mapping[str, tuple[str, ...]]


def lazy_module(
    namespace: dict[str, Any],
    exports: Exports,
    missing: Callable[[str, Mapping[str, str]], str] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """(``__getattr__``, ``__dir__``, ``__all__``) for the package whose globals are
    `namespace` and whose public names are `exports` (defining module -> names);
    `missing(name, public)` words the error for an unknown name."""
    module_name = str(namespace["__name__"])
    public = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        source = public.get(name)
        if source is None:
            default = f"module {module_name!r} has no attribute {name!r}"
            raise AttributeError(missing(name, public) if missing is not None else default)
        value = getattr(importlib.import_module(source), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *public})

    return __getattr__, __dir__, sorted(public)
