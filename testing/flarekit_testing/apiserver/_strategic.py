"""Strategic merge patch of built-in kinds, driven by their schemas' patch strategies.

kubectl sends these for `set image`, `label`, `edit` and the client-side `apply` of built-in
kinds: a JSON merge patch whose lists are merged item by item where the schema says
`x-kubernetes-patch-strategy: merge` (by `x-kubernetes-patch-merge-key`, or by value for
lists of scalars), with the directives of apimachinery's strategicpatch package:
`$patch: replace|delete|merge` on a map or list item, `$retainKeys`,
`$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`. Lists without a merge
strategy are replaced, as for a JSON merge patch. Custom resources do not take strategic
merge patches (415), as on a real server.
"""

from __future__ import annotations

from typing import Any

from flarekit_testing.apiserver._json import copy_json
from flarekit_testing.apiserver._patch import PatchError
from flarekit_testing.apiserver._structural import Schema

JSON = dict[str, Any]

_DELETE = object()
ORDER = "$setElementOrder/"
DELETE_FROM = "$deleteFromPrimitiveList/"


def _merges(s: Schema | None) -> bool:
    return s is not None and "merge" in s.patch_strategy.split(",")


def _key_of(item: Any, key: str | None) -> Any:
    if key is None:
        return ("v", repr(item)) if not isinstance(item, (dict, list)) else None
    return ("k", repr(item.get(key))) if isinstance(item, dict) else None


def _merge_list(original: list[Any], patch: list[Any], s: Schema) -> list[Any]:
    key = s.patch_merge_key
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [copy_json(p) for p in patch if not (isinstance(p, dict) and "$patch" in p)]
    merged = [copy_json(o) for o in original]
    for item in patch:
        if key is None or not isinstance(item, dict):
            if item not in merged:
                merged.append(copy_json(item))
            continue
        if key not in item:
            raise PatchError(f"map: {item} does not contain declared merge key: {key}", 400)
        found = next(
            (n for n, o in enumerate(merged) if isinstance(o, dict) and o.get(key) == item[key]),
            None,
        )
        directive = item.get("$patch")
        if directive == "delete":
            if found is not None:
                del merged[found]
            continue
        if found is None:
            merged.append({k: copy_json(v) for k, v in item.items() if k != "$patch"})
        else:
            merged[found] = merge(merged[found], item, s.items)
    return merged


def _order(merged: list[Any], order: list[Any], original: list[Any], key: str | None) -> list[Any]:
    """apimachinery's normalizeElementOrder: the items named in `order` (the
    `$setElementOrder` list, else the patch's own list) in that order, merged with the other
    items in their live order, each keeping its place relative to the live list."""
    ranks = {_key_of(o, key): n for n, o in enumerate(order)}
    live = {_key_of(o, key): n for n, o in enumerate(original)}
    patched = sorted(
        (i for i in merged if _key_of(i, key) in ranks), key=lambda i: ranks[_key_of(i, key)]
    )
    server_only = [i for i in merged if _key_of(i, key) not in ranks]
    out: list[Any] = []
    while patched or server_only:
        if not server_only:
            out.append(patched.pop(0))
        elif not patched:
            out.append(server_only.pop(0))
        else:
            left, right = live.get(_key_of(server_only[0], key)), live.get(_key_of(patched[0], key))
            if left is not None and right is not None and left < right:
                out.append(server_only.pop(0))
            else:
                out.append(patched.pop(0))
    return out


def merge(original: Any, patch: Any, s: Schema | None) -> Any:
    """`patch` applied to `original` (neither is modified)."""
    if not isinstance(patch, dict):
        return copy_json(patch)
    if not isinstance(original, dict):
        original = {}
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy_json(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return _DELETE
    out = dict(original)
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        out = {k: v for k, v in out.items() if k in retain}
    for name, value in patch.items():
        if name.startswith(DELETE_FROM):
            field = name[len(DELETE_FROM) :]
            if isinstance(out.get(field), list) and isinstance(value, list):
                out[field] = [v for v in out[field] if v not in value]
    for name, value in patch.items():
        if name.startswith("$"):
            continue
        child = s.child_schema(name) if s is not None else None
        if value is None:
            out.pop(name, None)
        elif isinstance(value, dict):
            merged = merge(out.get(name), value, child)
            if merged is _DELETE:
                out.pop(name, None)
            else:
                out[name] = merged
        elif isinstance(value, list) and _merges(child) and child is not None:
            current = out.get(name)
            live = current if isinstance(current, list) else []
            merged_list = _merge_list(live, value, child)
            order = patch.get(ORDER + name)
            if not isinstance(order, list):
                order = [v for v in value if not (isinstance(v, dict) and "$patch" in v)]
            out[name] = _order(merged_list, order, live, child.patch_merge_key)
        else:
            out[name] = copy_json(value)
    for name, value in patch.items():
        if name.startswith(ORDER) and isinstance(value, list) and name[len(ORDER) :] not in patch:
            field = name[len(ORDER) :]
            child = s.child_schema(field) if s is not None else None
            current = out.get(field)
            if isinstance(current, list):
                key = child.patch_merge_key if child is not None else None
                out[field] = _order(current, value, current, key)
    return out


def apply_strategic(doc: JSON, patch: Any, s: Schema | None) -> JSON:
    if not isinstance(patch, dict):
        raise PatchError(
            "json: cannot unmarshal array into Go value of type map[string]interface {}", 400
        )
    out = merge(doc, patch, s)
    return out if isinstance(out, dict) else {}
