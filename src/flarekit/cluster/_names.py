"""Parameter names a configuration does not have: CodeFlare SDK's old names, and typos.

Why: a dataclass answers ``ClusterConfiguration(name="x", head_cpus=2)`` with a bare
``TypeError: unexpected keyword argument``. People coming from CodeFlare SDK type its old
names (``head_cpus``, ``min_memory``, ``num_gpus``, ...) and everybody makes typos
(``num_worker``). :func:`suggest_names` wraps a dataclass's ``__init__`` so that unknown
names raise :class:`UnknownParameter` instead: a `ConfigError` (every unknown name at once,
each with the parameter to use) that is also a `TypeError`, so code catching either works.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import TypeVar

from flarekit._validation import ConfigError, Problem

__all__ = ["CODEFLARE_NAMES", "UnknownParameter", "suggest_names"]

T = TypeVar("T")

#: CodeFlare SDK's deprecated ClusterConfiguration names and what replaces each here.
CODEFLARE_NAMES = {
    "head_cpus": "head_cpu_requests and head_cpu_limits",
    "head_memory": "head_memory_requests and head_memory_limits",
    "head_gpus": "head_extended_resource_requests={'nvidia.com/gpu': N}",
    "num_gpus": "worker_extended_resource_requests={'nvidia.com/gpu': N}",
    "min_cpus": "worker_cpu_requests",
    "max_cpus": "worker_cpu_limits",
    "min_memory": "worker_memory_requests",
    "max_memory": "worker_memory_limits",
}


class UnknownParameter(ConfigError, TypeError):
    """Keyword arguments the configuration does not have, each with what to write instead."""


def _problem(subject: str, name: str, value: object, known: list[str]) -> Problem:
    if subject == "ClusterConfiguration" and name in CODEFLARE_NAMES:
        return Problem(
            name,
            value,
            "CodeFlare SDK's old name, not a ClusterConfiguration parameter",
            CODEFLARE_NAMES[name],
        )
    import difflib  # here: only a wrong name needs it, and the facade imports this module

    close = difflib.get_close_matches(name, known, n=3)
    hint = " or ".join(close) if close else f"one of {', '.join(known)}"
    return Problem(name, value, f"not a {subject} parameter", hint)


def suggest_names(cls: type[T]) -> type[T]:
    """Make the dataclass `cls` refuse unknown keyword arguments with `UnknownParameter`."""
    generated: Callable[..., None] = cls.__init__
    known = sorted(f.name for f in dataclasses.fields(cls) if f.init)  # type: ignore[arg-type]

    @functools.wraps(generated)
    def __init__(self: T, *args: object, **kwargs: object) -> None:
        unknown = [name for name in kwargs if name not in known]
        if unknown:
            problems = [_problem(cls.__name__, n, kwargs[n], known) for n in unknown]
            raise UnknownParameter(problems, cls.__name__)
        generated(self, *args, **kwargs)

    setattr(cls, "__init__", __init__)  # noqa: B010  (assigning a method confuses type checkers)
    return cls
