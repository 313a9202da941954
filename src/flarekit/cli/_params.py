"""Parameters from a YAML/JSON file (``-f``) and from flags, merged and checked by name.

Why: a cluster or job has dozens of parameters. Files hold the long-lived ones (the same
names as the Python API: ``num_workers``, ``worker_memory_requests``, ...), flags override
them for one run, and ``--set name=value`` reaches any parameter without a dedicated flag. A
name that is not a parameter is refused with the closest valid names; the values themselves
are checked by the facade (``ClusterConfiguration``, ``RayJob``, ``TrainJob``), which
reports every problem at once.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence

import flarekit.client
from flarekit._validation import ConfigError, Problem
from flarekit.cli._exit import UsageError

__all__ = [
    "check_names",
    "key_values",
    "load_file",
    "merge",
    "parse_set",
]


def load_file(path: str | None) -> dict[str, object]:
    """The mapping in a YAML or JSON file (``-`` reads stdin); ``{}`` without a path.

    Read with the bounds of :mod:`flarekit.client._input_files` (size, encoding, nesting,
    aliases): a file that breaks one is a usage error naming the file and the reason.
    """
    if path is None:
        return {}

    what = "config file " + ("on standard input" if path == "-" else path)
    try:
        data = flarekit.client.load_text(
            flarekit.client.decode(flarekit.client.read_file(path, what), what), what
        )
    except flarekit.client.InputError as exc:
        raise UsageError(str(exc)) from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise UsageError(
            f"config file {path} must hold a mapping of parameter names to values, "
            f"not a {type(data).__name__}"
        )
    return {str(k): v for k, v in data.items()}


def _scalar(text: str, flag: str = "--set") -> object:
    """A flag value read as YAML (``3`` -> 3, ``true`` -> True, ``[a, b]`` -> a list), so
    ``--set`` reaches parameters of any type; text that is not YAML stays text. Read with
    the bounds of files: an alias bomb on the command line is refused as one."""
    if not text.strip():
        return text
    try:
        return flarekit.client.load_text(text, f"the {flag} value")
    except flarekit.client.InputTooLarge as exc:
        raise UsageError(str(exc)) from None
    except flarekit.client.InputError:
        return text


def parse_set(items: Sequence[str] | None, flag: str = "--set") -> dict[str, object]:
    """``name=value`` pairs, values read as YAML."""
    out: dict[str, object] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"{flag} {item!r}: expected name=value, e.g. {flag} num_workers=2")
        out[name.strip()] = _scalar(value, flag)
    return out


def key_values(items: Sequence[str] | None, flag: str) -> dict[str, str]:
    """``KEY=VALUE`` pairs kept as text (environment variables, labels)."""
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag} {item!r}: expected KEY=VALUE")
        out[key] = value
    return out


def merge(*layers: Mapping[str, object]) -> dict[str, object]:
    """Later layers win; ``None`` values (flags not given) do not override."""
    out: dict[str, object] = {}
    for layer in layers:
        out.update({k: v for k, v in layer.items() if v is not None})
    return out


def check_names(
    params: Mapping[str, object], allowed: Iterable[str], subject: str, prefix: str = ""
) -> None:
    """Refuse parameter names that `subject` does not have (a validation error naming each,
    with the closest valid names)."""
    known = sorted(allowed)
    problems = []
    for name in params:
        if name in known:
            continue
        close = difflib.get_close_matches(name, known, n=3)
        hint = " or ".join(close) if close else f"one of {', '.join(known)}"
        problems.append(Problem(prefix + name, params[name], f"not a {subject} parameter", hint))
    if problems:
        raise ConfigError(problems, subject)
