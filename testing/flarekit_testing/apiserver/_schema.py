"""A CRD version's structural schema, compiled once: what admission and apply need to know.

Each node of an ``openAPIV3Schema`` becomes a ``Schema`` with its types, formats (those the
apiserver keeps), properties, items, list and map types, merge keys and value constraints
precomputed, and its ``pattern`` translated from RE2 to Python's ``re``. Compiled schemas
are cached per schema object.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

_STRING_FORMATS = frozenset(
    (
        *("bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac"),
        *("uuid", "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn"),
        *("hexcolor", "rgbcolor", "byte", "password", "date", "duration", "datetime"),
        *("k8sshortname", "k8slongname"),
    )
)


class Schema:
    """One schema node, with everything admission needs precomputed."""

    __slots__ = (
        "additional",
        "all_of",
        "any_of",
        "default",
        "embedded",
        "enum",
        "excl_max",
        "excl_min",
        "format",
        "has_default",
        "items",
        "list_map_keys",
        "list_type",
        "map_type",
        "max_items",
        "max_length",
        "max_props",
        "maximum",
        "min_items",
        "min_length",
        "min_props",
        "minimum",
        "multiple_of",
        "not_",
        "nullable",
        "one_of",
        "patch_merge_key",
        "patch_strategy",
        "pattern",
        "pattern_re",
        "preserve",
        "properties",
        "required",
        "types",
        "unique_items",
    )

    def __init__(self, raw: Mapping[str, Any]) -> None:
        typ = raw.get("type")
        self.types: tuple[str, ...] = (typ,) if isinstance(typ, str) and typ else ()
        if raw.get("x-kubernetes-int-or-string"):
            self.types = ("integer", "string")
        self.nullable = bool(raw.get("nullable"))
        self.format = _effective_format(raw.get("format"), self.types)
        self.preserve = bool(raw.get("x-kubernetes-preserve-unknown-fields"))
        self.embedded = bool(raw.get("x-kubernetes-embedded-resource"))
        self.properties = {k: Schema(v) for k, v in (raw.get("properties") or {}).items()}
        additional = raw.get("additionalProperties")
        self.additional: Schema | bool | None = (
            Schema(additional) if isinstance(additional, Mapping) else additional
        )
        items = raw.get("items")
        self.items = Schema(items) if isinstance(items, Mapping) else None
        self.required: tuple[str, ...] = tuple(raw.get("required") or ())
        self.enum: list[Any] | None = raw.get("enum")
        self.has_default = "default" in raw
        self.default = raw.get("default")
        self.pattern: str | None = raw.get("pattern")
        self.pattern_re = _compile_pattern(self.pattern) if self.pattern is not None else None
        self.maximum = raw.get("maximum")
        self.minimum = raw.get("minimum")
        self.excl_max = bool(raw.get("exclusiveMaximum"))
        self.excl_min = bool(raw.get("exclusiveMinimum"))
        self.multiple_of = raw.get("multipleOf")
        self.max_length = raw.get("maxLength")
        self.min_length = raw.get("minLength")
        self.max_items = raw.get("maxItems")
        self.min_items = raw.get("minItems")
        self.unique_items = bool(raw.get("uniqueItems"))
        self.max_props = raw.get("maxProperties")
        self.min_props = raw.get("minProperties")
        self.list_type = raw.get("x-kubernetes-list-type")
        self.map_type = raw.get("x-kubernetes-map-type")
        self.patch_strategy = str(raw.get("x-kubernetes-patch-strategy") or "")
        self.patch_merge_key = raw.get("x-kubernetes-patch-merge-key")
        self.list_map_keys: tuple[str, ...] = tuple(raw.get("x-kubernetes-list-map-keys") or ())
        self.all_of = [Schema(s) for s in raw.get("allOf") or ()]
        self.any_of = [Schema(s) for s in raw.get("anyOf") or ()]
        self.one_of = [Schema(s) for s in raw.get("oneOf") or ()]
        self.not_ = Schema(raw["not"]) if isinstance(raw.get("not"), Mapping) else None

    def child_schema(self, key: str) -> Schema | None:
        """The schema that governs member ``key`` (property, else additionalProperties)."""
        prop = self.properties.get(key)
        if prop is not None:
            return prop
        return self.additional if isinstance(self.additional, Schema) else None


def _effective_format(fmt: Any, types: tuple[str, ...]) -> str:
    """The format upstream keeps after stripping unsupported ones (else "")."""
    if not isinstance(fmt, str) or not fmt:
        return ""
    kind = types[0] if len(types) == 1 else ""
    if kind in ("", "string"):
        return fmt if fmt.replace("-", "") in _STRING_FORMATS else ""
    if kind == "integer":
        return fmt if fmt in ("int32", "int64") else ""
    if kind == "number":
        return fmt if fmt in ("float", "double") else ""
    return ""


_INLINE_FLAGS = re.compile(r"\(\?([imsU]+)\)")


def _translate_re2(pattern: str) -> str:
    """Rewrite RE2 syntax Python's ``re`` reads differently.

    Inline flags like ``^(?i)abc`` apply to the rest of the group in RE2 but must lead the
    whole pattern in Python, so they become a scoped group ``^(?i:abc)``; ``$`` and ``\\z``
    mean end of text (Python's ``$`` also matches before a final newline).
    """
    out: list[str] = []
    pending = [0]  # scoped groups to close at the end of each open group
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            out.append("\\Z" if nxt == "z" and not in_class else c + nxt)
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            out.append(c)
        elif c == "[":
            in_class = True
            out.append(c)
            if i + 1 < n and pattern[i + 1] == "]":
                out.append("]")
                i += 1
        elif c == "(":
            flags = _INLINE_FLAGS.match(pattern, i)
            if flags and i > 0:
                out.append(f"(?{flags.group(1).replace('U', '')}:")
                pending[-1] += 1
                i = flags.end()
                continue
            pending.append(0)
            out.append(c)
        elif c == ")":
            out.append(")" * (pending.pop() if len(pending) > 1 else 0))
            out.append(c)
        elif c == "$":
            out.append("\\Z")
        else:
            out.append(c)
        i += 1
    out.append(")" * pending[0])
    return "".join(out)


def _compile_pattern(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(_translate_re2(pattern))
    except re.error:
        return None  # RE2-only syntax (e.g. \p{L}); upstream would accept the CRD


_CACHE: OrderedDict[int, tuple[Mapping[str, Any], Schema]] = OrderedDict()
_CACHE_SIZE = 1024  # every served version of every default release, with room


def compiled(schema: Mapping[str, Any]) -> Schema:
    """Compile ``schema`` once; the cache keeps the dict alive so its id stays unique."""
    key = id(schema)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is schema:
        _CACHE.move_to_end(key)
        return hit[1]
    built = Schema(schema)
    _CACHE[key] = (schema, built)
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return built


META_FIELDS = frozenset(("apiVersion", "kind", "metadata"))
OBJECT_META_FIELDS = frozenset(
    (
        *("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion"),
        *("generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"),
        *("labels", "annotations", "ownerReferences", "finalizers", "managedFields"),
    )
)


def join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key
