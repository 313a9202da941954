"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902) on plain JSON-like values.

``FakeCluster`` applies ``PATCH`` requests with these. They never mutate their input and
fail with ``PatchError`` carrying the message and HTTP status the Kubernetes API server
uses: a patch document that cannot be decoded is a 400 BadRequest, a well-formed JSON
patch that does not apply (failed ``test``, missing path, bad array index) is a 422, with
the wording of the ``evanphx/json-patch`` library the API server is built on, e.g.
``testing value /spec/replicas failed: test failed``.

One deliberate difference: ``replace`` of an object member that does not exist fails, as
RFC 6902 requires (the library the API server uses silently adds it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flarekit_testing.apiserver._json import copy_json, json_equal

__all__ = ["PatchError", "apply_json_patch", "apply_merge_patch"]

_MISSING = "missing value"
_INVALID_INDEX = "invalid index referenced"


class PatchError(ValueError):
    """A patch that cannot be decoded (``status_code`` 400) or applied (422)."""

    def __init__(self, message: str, status_code: int = 422) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code


# --- RFC 7386 ----------------------------------------------------------------------------


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _merge(target: Any, patch: Mapping[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            result[key] = _merge(result.get(key), value)
        else:
            result[key] = _without_nulls(value)
    return result


def apply_merge_patch(doc: Any, patch: Any) -> Any:
    """Return ``doc`` with the JSON merge patch ``patch`` applied (RFC 7386).

    ``null`` members delete, objects merge recursively, anything else replaces. A patch
    that is ``null`` or a bare scalar is rejected as the API server does ("Invalid JSON
    Patch", 400); an array patch replaces the document.
    """
    if isinstance(patch, dict):
        return copy_json(_merge(doc, patch))
    if isinstance(patch, list):
        return copy_json(_without_nulls(patch))
    raise PatchError("Invalid JSON Patch", 400)


# --- RFC 6902 ----------------------------------------------------------------------------


def _json_type(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if value is None:
        return "null"
    return "number"


def _decode_token(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _find_parent(doc: Any, path: str) -> tuple[Any, str] | None:
    """The container holding ``path``'s last token, and that token; None if unreachable."""
    if not path.startswith("/"):
        return None
    tokens = path.split("/")[1:]
    node = doc
    for raw in tokens[:-1]:
        token = _decode_token(raw)
        if isinstance(node, dict):
            if token not in node:
                return None
            node = node[token]
        elif isinstance(node, list):
            index = _parse_index(token)
            if index is None or index >= len(node):
                return None
            node = node[index]
        else:
            return None
        if not isinstance(node, (dict, list)):
            return None
    return node, _decode_token(tokens[-1])


def _parse_index(token: str) -> int | None:
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        return None
    return int(token)


def _array_index(container: list[Any], key: str, *, insert: bool) -> int:
    index = _parse_index(key)
    if index is None:
        raise _Failure(f"value was not a proper array index: '{key}': {_INVALID_INDEX}")
    limit = len(container) if insert else len(container) - 1
    if index > limit:
        raise _Failure(f"Unable to access invalid index: {index}: {_INVALID_INDEX}")
    return index


class _Failure(Exception):
    """An inner failure, wrapped with the operation's context before it reaches the caller."""


def _get(container: Any, key: str) -> Any:
    if isinstance(container, dict):
        if key not in container:
            raise _Failure(f"Unable to get nonexistent key: {key}: {_MISSING}")
        return container[key]
    return container[_array_index(container, key, insert=False)]


def _add(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
    elif key == "-":
        container.append(value)
    else:
        container.insert(_array_index(container, key, insert=True), value)


def _remove(container: Any, key: str) -> Any:
    if isinstance(container, dict):
        if key not in container:
            raise _Failure(f"Unable to remove nonexistent key: {key}: {_MISSING}")
        return container.pop(key)
    return container.pop(_array_index(container, key, insert=False))


def _string_member(op: Mapping[str, Any], name: str) -> str | None:
    value = op.get(name)
    return value if isinstance(value, str) else None


def _apply_one(doc: Any, op: Mapping[str, Any]) -> None:
    kind = op.get("op") if isinstance(op.get("op"), str) else "unknown"
    path = _string_member(op, "path")
    value = copy_json(op.get("value"))
    if kind not in ("add", "remove", "replace", "move", "copy", "test"):
        raise PatchError(f"Unexpected kind: {kind}")
    if path is None:
        raise PatchError(f"{kind} operation failed to decode path: {_MISSING}")

    if kind in ("move", "copy"):
        source = _string_member(op, "from")
        if source is None:
            raise PatchError(f"{kind} operation failed to decode from: {_MISSING}")
        found = _find_parent(doc, source)
        if found is None:
            raise PatchError(
                f"{kind} operation does not apply: doc is missing from path: {source}: {_MISSING}"
            )
        container, key = found
        if kind == "move" and isinstance(container, dict) and key not in container:
            raise PatchError(
                f"error in move for path: '{key}': Unable to remove nonexistent key: {key}: "
                + _MISSING
            )
        try:
            moved = _get(*found)
            if kind == "move":
                if path == source or path.startswith(source + "/"):
                    if path != source:
                        raise _Failure(f"Unable to move a value into its own child: {path}")
                    return
                _remove(*found)
            else:
                moved = copy_json(moved)
        except _Failure as err:
            raise PatchError(f"error in {kind} for path: '{source}': {err}") from None
        target = _find_parent(doc, path)
        if target is None:
            raise PatchError(
                f"{kind} operation does not apply: doc is missing destination path: {path}: {_MISSING}"
            )
        try:
            _add(*target, moved)
        except _Failure as err:
            raise PatchError(f"error in {kind} for path: '{path}': {err}") from None
        return

    found = _find_parent(doc, path)
    if found is None:
        quoted = f'"{path}"' if kind in ("add", "remove") else path
        verb = "is missing path" if kind == "test" else "doc is missing path"
        raise PatchError(f"{kind} operation does not apply: {verb}: {quoted}: {_MISSING}")
    container, key = found
    try:
        if kind == "add":
            _add(container, key, value)
        elif kind == "remove":
            _remove(container, key)
        elif kind == "replace":
            try:
                _get(container, key)
            except _Failure:
                raise PatchError(
                    f"replace operation does not apply: doc is missing key: {path}: {_MISSING}"
                ) from None
            if isinstance(container, dict):
                container[key] = value
            else:
                container[_array_index(container, key, insert=False)] = value
        else:  # test
            present = not isinstance(container, dict) or key in container
            current = _get(container, key) if present else None
            if not json_equal(current, value):
                raise PatchError(f"testing value {path} failed: test failed")
    except _Failure as err:
        raise PatchError(f"error in {kind} for path: '{path}': {err}") from None


def apply_json_patch(doc: Any, patch: Any) -> Any:
    """Return ``doc`` with the JSON patch ``patch`` (a list of operations) applied.

    Supports ``add``, ``remove``, ``replace``, ``move``, ``copy`` and ``test`` with RFC 6901
    pointers (``~0`` for ``~``, ``~1`` for ``/``, ``-`` for the end of an array). Operations
    apply in order to a copy; the first failure raises ``PatchError`` and nothing changes.
    """
    if not isinstance(patch, list):
        raise PatchError(
            f"json: cannot unmarshal {_json_type(patch)} into Go value of type jsonpatch.Patch",
            400,
        )
    for op in patch:
        if not isinstance(op, dict) and op is not None:
            raise PatchError(
                f"json: cannot unmarshal {_json_type(op)} into Go value of type "
                "jsonpatch.Operation",
                400,
            )
    result = copy_json(doc)
    for op in patch:
        _apply_one(result, op or {})
    return result
