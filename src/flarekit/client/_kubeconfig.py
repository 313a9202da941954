"""A kubeconfig file checked before the ``kubernetes`` package reads it.

Why: the official loader trusts the file's shape. A top-level list, ``contexts: [1]``, a
context that is a number, ``server: 5`` or an ``auth-provider`` config that is not a mapping
make it fail with ``TypeError`` or ``AttributeError`` deep inside, and it reads YAML without
bounds (an alias bomb in a kubeconfig is walked like any other). Here each file is read with
the bounds of :mod:`flarekit.client._input_files` and its entries are checked against the
kubeconfig format (``clientcmd/api/v1``), so that a broken file is one :class:`KubeconfigError` naming the file
and the entry, and the official loader only ever sees files of the right shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from flarekit.client._errors import KubeconfigError
from flarekit.client._input_files import InputError, decode, load_text, read_file

__all__ = ["ContextEntry", "check_kubeconfig"]

#: kubeconfigs are small; a larger file is not one.
MAX_BYTES = 16 * 1024 * 1024

_TEXT = "a string"
_FLAG = "true or false"
_STRINGS = "a list of strings"
_MAPPING = "a mapping"
_PAIRS = "a mapping of strings to strings"
_ENV = "a list of mappings with a name and a value"

#: The fields whose types the official loader relies on, per section (others are left to it).
_FIELDS: dict[str, dict[str, str]] = {
    "cluster": {
        "server": _TEXT,
        "certificate-authority": _TEXT,
        "certificate-authority-data": _TEXT,
        "insecure-skip-tls-verify": _FLAG,
        "tls-server-name": _TEXT,
        "proxy-url": _TEXT,
    },
    "context": {"cluster": _TEXT, "user": _TEXT, "namespace": _TEXT},
    "user": {
        "token": _TEXT,
        "tokenFile": _TEXT,
        "client-certificate": _TEXT,
        "client-certificate-data": _TEXT,
        "client-key": _TEXT,
        "client-key-data": _TEXT,
        "username": _TEXT,
        "password": _TEXT,
        "exec": _MAPPING,
        "auth-provider": _MAPPING,
    },
    "exec": {"command": _TEXT, "apiVersion": _TEXT, "args": _STRINGS, "env": _ENV},
    "auth-provider": {"name": _TEXT, "config": _PAIRS},
}


class ContextBody(BaseModel):
    """What a context names; flarekit reads its default namespace."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    namespace: str | None = None


class ContextEntry(BaseModel):
    """An entry of a kubeconfig's ``contexts`` (as the official loader lists them, after
    `check_kubeconfig` has checked their shape)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    name: str = ""
    context: ContextBody | None = None


def check_kubeconfig(path: Path) -> None:
    """Refuse a kubeconfig that cannot be read or is not shaped like one."""
    what = f"kubeconfig {path}"
    try:
        data = read_file(path, what, limit=MAX_BYTES)
        if not _is_utf8(data):
            raise InputError(f"{what} is not UTF-8 text; save it as UTF-8")
        document = load_text(decode(data, what), what)
    except InputError as exc:
        raise KubeconfigError(str(exc)) from None
    if document is None:
        return  # an empty file: the official loader says "file is empty"
    if not isinstance(document, Mapping):
        raise KubeconfigError(f"{what} must be a mapping, not {_kind(document)}")
    problems = _problems(document)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise KubeconfigError(f"{what}: {problems[0]}{more}")


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _problems(document: Mapping[object, object]) -> list[str]:
    problems: list[str] = []
    current = document.get("current-context")
    if current is not None and not isinstance(current, str):
        problems.append(f"current-context must be {_TEXT}, not {_kind(current)}")
    for section, entry_key in (("clusters", "cluster"), ("contexts", "context"), ("users", "user")):
        entries = document.get(section)
        if entries is None:
            continue
        if not isinstance(entries, list):
            problems.append(f"{section} must be a list, not {_kind(entries)}")
            continue
        for index, entry in enumerate(entries):
            where = f"{section}[{index}]"
            if not isinstance(entry, Mapping):
                problems.append(f"{where} must be a mapping, not {_kind(entry)}")
                continue
            if not isinstance(entry.get("name"), str) or not entry.get("name"):
                problems.append(f"{where}.name must be a non-empty string")
            body = entry.get(entry_key)
            if body is not None:
                problems += _section(body, entry_key, f"{where}.{entry_key}")
    return problems


def _section(body: object, kind: str, where: str) -> list[str]:
    if not isinstance(body, Mapping):
        return [f"{where} must be {_MAPPING}, not {_kind(body)}"]
    problems = []
    for field, expected in _FIELDS[kind].items():
        if field not in body or body[field] is None:
            continue
        value = body[field]
        if not _fits(value, expected):
            problems.append(f"{where}.{field} must be {expected}, not {_kind(value)}")
        elif expected == _MAPPING:
            problems += _section(value, field, f"{where}.{field}")
    return problems


def _fits(value: object, expected: str) -> bool:
    if expected == _TEXT:
        return isinstance(value, str)
    if expected == _FLAG:
        return isinstance(value, bool)
    if expected == _STRINGS:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if expected == _PAIRS:
        return isinstance(value, Mapping) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        )
    if expected == _MAPPING:
        return isinstance(value, Mapping)
    return isinstance(value, list) and all(
        isinstance(v, Mapping)
        and isinstance(v.get("name"), str)
        and isinstance(v.get("value"), str)
        for v in value
    )


def _kind(value: object) -> str:
    """What a value is, without showing it (it may be a secret)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__
