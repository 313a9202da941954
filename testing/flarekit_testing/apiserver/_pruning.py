"""Pruning and defaulting of custom resources, as apiextensions-apiserver does them.

Pruning drops what the structural schema does not know (never apiVersion, kind or metadata
at the root or in embedded resources; nothing under x-kubernetes-preserve-unknown-fields
except declared properties), non-nullable nulls without a default, and metadata fields that
ObjectMeta does not have; it records what it dropped for the `unknown field` warnings.
Defaulting fills absent (or non-nullable null) fields from `default`, deep-copied.
"""

from __future__ import annotations

from typing import Any

from flarekit_testing.apiserver._json import copy_json
from flarekit_testing.apiserver._schema import META_FIELDS, OBJECT_META_FIELDS, Schema, join


class _Pruner:
    def __init__(self) -> None:
        self.unknown: list[str] = []

    def prune(self, x: Any, s: Schema | None, path: str, embedded: bool = False) -> None:
        if s is not None and s.preserve:
            self._skip_prune(x, s, path, embedded or s.embedded)
            return
        if isinstance(x, dict):
            if s is None:
                for k in list(x):
                    self.unknown.append(join(path, k))
                    del x[k]
                return
            embedded = embedded or s.embedded
            for k in list(x):
                v = x[k]
                if embedded and k in META_FIELDS:
                    if k == "metadata":
                        self._coerce_meta(v, join(path, k), root=not path)
                    continue
                sub = s.child_schema(k)
                if sub is not None:
                    self._null_or_prune(x, k, v, sub, join(path, k))
                elif s.additional is True:
                    self.prune(v, None, join(path, k))
                else:
                    self.unknown.append(join(path, k))
                    del x[k]
        elif isinstance(x, list):
            items = s.items if s is not None else None
            for i, v in enumerate(x):
                self.prune(v, items, f"{path}[{i}]")

    def _null_or_prune(self, x: dict[str, Any], k: str, v: Any, s: Schema, path: str) -> None:
        if v is None:
            if not s.nullable and not s.has_default:
                del x[k]  # upstream PruneNonNullableNullsWithoutDefaults
            return
        self.prune(v, s, path)

    def _skip_prune(self, x: Any, s: Schema, path: str, embedded: bool) -> None:
        if isinstance(x, dict):
            for k in list(x):
                if embedded and k in META_FIELDS:
                    if k == "metadata":
                        self._coerce_meta(x[k], join(path, k), root=not path)
                    continue
                sub = s.child_schema(k)
                if sub is not None:
                    self._null_or_prune(x, k, x[k], sub, join(path, k))
                elif s.additional is True:
                    self.prune(x[k], None, join(path, k))
        elif isinstance(x, list) and s.items is not None:
            for i, v in enumerate(x):
                self._skip_prune(v, s.items, f"{path}[{i}]", s.items.embedded)

    def _coerce_meta(self, meta: Any, path: str, root: bool) -> None:
        """Drop what decoding into ``ObjectMeta`` drops: unknown keys, nulls, and the empty
        maps and lists its ``omitempty`` fields leave out (`annotations: {}` is no
        annotations, so a patch that sends it changes nothing).

        Embedded objects also lose an empty ``creationTimestamp``, as upstream's coercion
        removes the zero timestamp the round trip would add.
        """
        if not isinstance(meta, dict):
            return
        for k in list(meta):
            if k not in OBJECT_META_FIELDS:
                self.unknown.append(join(path, k))
                del meta[k]
            elif _left_out(k, meta[k], root):
                del meta[k]


def _left_out(key: str, value: Any, root: bool) -> bool:
    if value is None or (not root and key == "creationTimestamp" and not value):
        return True
    return key in _OMITTED_WHEN_EMPTY and value in ({}, [], "")


#: ObjectMeta's `omitempty` collections and strings that are not left out elsewhere.
_OMITTED_WHEN_EMPTY = frozenset(
    ("labels", "annotations", "finalizers", "ownerReferences", "managedFields", "generateName")
)


def _default(x: Any, s: Schema | None) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        for k, prop in s.properties.items():
            if prop.has_default and (k not in x or (x[k] is None and not prop.nullable)):
                x[k] = copy_json(prop.default)
        additional = s.additional if isinstance(s.additional, Schema) else None
        for k, v in x.items():
            member = s.properties.get(k)
            if member is not None:
                _default(v, member)
            elif additional is not None:
                if v is None and not additional.nullable and additional.has_default:
                    x[k] = v = copy_json(additional.default)
                _default(v, additional)
    elif isinstance(x, list):
        items = s.items
        if items is None:
            return
        for i, v in enumerate(x):
            if v is None and not items.nullable and items.has_default:
                x[i] = v = copy_json(items.default)
            _default(v, items)
