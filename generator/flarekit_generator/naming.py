"""Python names for JSON names: snake_case attributes and PascalCase classes.

Names are derived from schema paths only, never numbered: a clash is resolved
by qualifying with the parent's name, so a class name always says what the
thing is.
"""

from __future__ import annotations

import keyword
import re

#: Attribute names pydantic's BaseModel (or our base class) already uses.
_MODEL_ATTRIBUTES = frozenset(
    {
        "copy",
        "dict",
        "json",
        "schema",
        "schema_json",
        "construct",
        "validate",
        "fields",
        "from_orm",
        "parse_obj",
        "parse_raw",
        "parse_file",
        "update_forward_refs",
        "to_dict",
        "to_json",
        "resource_info",
        "validate_json_lazily",
    }
)
#: Names used in generated annotations; a field of that name would shadow them.
_ANNOTATION_NAMES = frozenset({"str", "int", "float", "bool", "list", "dict", "any", "none"})


def words(name: str) -> list[str]:
    """Split a JSON name into words: ``podIPs`` -> ``['pod', 'IPs']``."""
    parts: list[str] = []
    for chunk in re.split(r"[^A-Za-z0-9]+", name):
        parts.extend(_split_camel(chunk))
    return [p for p in parts if p]


def _split_camel(chunk: str) -> list[str]:
    # "hostIPC" -> host, IPC ; "podIPs" -> pod, IPs ; "x509Cert" -> x509, Cert
    out: list[str] = []
    current = ""
    for i, char in enumerate(chunk):
        prev = chunk[i - 1] if i else ""
        nxt = chunk[i + 1] if i + 1 < len(chunk) else ""
        boundary = False
        if current and (
            (char.isupper() and (prev.islower() or prev.isdigit()))
            or (char.isupper() and prev.isupper() and nxt.islower() and nxt != "s")
            or (char.isupper() and prev.isupper() and nxt == "s" and i + 2 < len(chunk))
        ):
            boundary = True
        if boundary:
            out.append(current)
            current = char
        else:
            current += char
    if current:
        out.append(current)
    # A lone letter belongs to its neighbour: "IPv6" -> ["IPv6"], "gRPC" -> ["gRPC"].
    merged: list[str] = []
    for part in out:
        if merged and len(merged[-1]) == 1 and not merged[-1].isdigit():
            merged[-1] += part
        else:
            merged.append(part)
    return merged


def snake_case(json_name: str) -> str:
    """The Python attribute name for a JSON property name."""
    name = "_".join(w.lower() for w in words(json_name)) or "field"
    if name[0].isdigit():
        name = "n_" + name
    if (
        # Soft keywords (match, case, type) are valid names: escaping them would make
        # the output depend on the Python version that ran the generator.
        keyword.iskeyword(name)
        or name in _MODEL_ATTRIBUTES
        or name in _ANNOTATION_NAMES
        or name.startswith("model_")
    ):
        name += "_"
    return name


def pascal_case(json_name: str) -> str:
    """A class-name fragment for a JSON property name: ``headGroupSpec`` -> ``HeadGroupSpec``."""
    out = "".join(w[:1].upper() + w[1:] for w in words(json_name))
    if not out:
        return "Value"
    if out[0].isdigit():
        out = "N" + out
    return out


#: Plurals the suffix rules below get wrong.
_IRREGULAR = {"aliases": "alias", "series": "series", "species": "species", "indices": "index"}


def singular(word: str) -> str:
    """A light English singular for array/map element names: ``podSets`` -> ``podSet``."""
    lower = word.lower()
    for plural, single in _IRREGULAR.items():
        if lower.endswith(plural):
            return word[: len(word) - len(plural)] + word[len(word) - len(plural)] + single[1:]
    if lower.endswith("pus"):  # gpus, cpus, tpus
        return word[:-1]
    for plural, single in (
        ("ies", "y"),
        ("sses", "ss"),
        ("xes", "x"),
        ("ches", "ch"),
        ("shes", "sh"),
    ):
        if lower.endswith(plural) and len(word) > len(plural) + 1:
            return word[: -len(plural)] + single
    if lower.endswith("statuses"):
        return word[:-2]
    if lower.endswith("s") and not lower.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def no_trailing_digit(name: str) -> str:
    """Class names never end in a digit (that reads like a numbered duplicate)."""
    return name + "Spec" if name[-1:].isdigit() else name


def camel_words(name: str) -> list[str]:
    """Split a PascalCase class name into words."""
    return re.findall(r"[A-Z][a-z0-9]*|[a-z0-9]+", name) or [name]


def common_suffix(names: list[str]) -> str:
    """The longest run of trailing words shared by every name ('' if none)."""
    split = [camel_words(n) for n in names]
    shortest = min(len(s) for s in split)
    taken: list[str] = []
    for i in range(1, shortest + 1):
        tail = {s[-i] for s in split}
        if len(tail) != 1:
            break
        taken.insert(0, tail.pop())
    return "".join(taken)
