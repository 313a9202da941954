"""The CRDs' CEL rules (``x-kubernetes-validations``), evaluated before a write as the API
server evaluates them.

Why: the pinned CRDs carry 256 rules (Kueue's most of all) that the models cannot check,
since the models depend on pydantic alone; a facade that sent an object one of them refuses
would learn it from a 422 after the fact, or, halfway through several writes, leave some
behind. So the write path (`prepare_write`) evaluates them first, with cel-python, on the
object as the server would see it: pruned of the fields the schema does not declare, nulls
dropped, defaults applied (the server runs the rules after both). Each rule runs where its
schema node is in the object, with ``self`` the value there; a transition rule (one that
reads ``oldSelf``) runs only on an update, where the old object has a value at the same place
(object properties and the items of ``x-kubernetes-list-type: map`` lists, by key, are
correlated; other list items are not). A failure is reported as the server reports it: the
place (``spec.resourceGroups[0]``, extended by the rule's ``fieldPath``), the rule's
``message`` or ``failed rule: <rule>``, and its ``reason``. A rule that cannot be evaluated
(a value of a type it does not expect) fails, as on the server.

The rules come from the CRD of the release the cluster runs (the models ship every pinned
release's CRDs), since rules change between releases.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from flarekit._validation import ConfigError, Problem
from flarekit_models import copy_json, crds_for

__all__ = ["RuleFailure", "RulesFailed", "crd_schema", "rule_failures"]

_META = ("apiVersion", "kind", "metadata")
_OLD_SELF = re.compile(r"\boldSelf\b")


@dataclass(frozen=True)
class RuleFailure:
    """One failed rule: where (the API server's form of the path), why, and the rule."""

    path: str
    message: str
    rule: str
    reason: str = "FieldValueInvalid"

    def __str__(self) -> str:
        return f"{self.path or '(the object)'}: {self.message}"


class RulesFailed(ConfigError):
    """An object fails CEL rules of its CRD: every failure, by place and message."""

    def __init__(self, failures: list[RuleFailure], subject: str = "") -> None:
        problems = [
            Problem(f.path or "(the object)", None, f.message, f"a value the rule {f.rule!r} takes")
            for f in failures
        ]
        super().__init__(problems, subject)
        self.failures = tuple(failures)


@cache
def crd_schema(family: str, tag: str, group: str, version: str, kind: str) -> dict[str, Any] | None:
    """The ``openAPIV3Schema`` of `kind` in `group`/`version` of a pinned release's CRDs."""
    for crd in crds_for({family: tag}):
        spec = crd["spec"]
        if spec["group"] != group or spec["names"]["kind"] != kind:
            continue
        for served in spec["versions"]:
            if served["name"] == version:
                schema: dict[str, Any] = served["schema"]["openAPIV3Schema"]
                return schema
    return None


def has_rules(schema: Mapping[str, Any], transition_only: bool = False) -> bool:
    """Whether the schema has any CEL rule (or any transition rule)."""
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for rule in node.get("x-kubernetes-validations", ()):
                if not transition_only or _OLD_SELF.search(rule.get("rule", "")):
                    return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def rule_failures(
    obj: Mapping[str, Any], schema: Mapping[str, Any], old: Mapping[str, Any] | None = None
) -> list[RuleFailure]:
    """Every rule of `schema` that `obj` (an update of `old`, if given) fails."""
    if not has_rules(schema):
        return []
    new_value = as_stored(obj, schema)
    old_value = as_stored(old, schema) if old is not None else None
    failures: list[RuleFailure] = []
    for path, node, value, previous in _places(new_value, old_value, schema):
        for rule in node.get("x-kubernetes-validations", ()):
            failure = _evaluate(rule, value, previous, path)
            if failure is not None:
                failures.append(failure)
    return failures


# --------------------------------------------------------------------------- the stored view
def as_stored(obj: Any, schema: Mapping[str, Any]) -> Any:
    """`obj` as the API server keeps it before running the rules: fields the schema does not
    declare pruned (but under ``x-kubernetes-preserve-unknown-fields``, and the apiVersion,
    kind and metadata of the object and of embedded resources), nulls that are not nullable
    dropped, defaults applied. Iterative, as objects nest as deep as the server takes."""
    value = copy_json(obj)
    stack: list[tuple[Any, Mapping[str, Any], bool]] = [(value, schema, True)]
    while stack:
        here, node, root = stack.pop()
        if isinstance(here, dict):
            _prune_object(here, node, root)
            embedded = root or node.get("x-kubernetes-embedded-resource")
            for key, child in here.items():
                if embedded and key in _META:
                    continue  # kept as they are (metadata is the API server's own)
                sub = _child(node, key)
                if sub is not None and isinstance(child, dict | list):
                    stack.append((child, sub, False))
        elif isinstance(here, list) and isinstance(node.get("items"), dict):
            stack.extend((item, node["items"], False) for item in here)
    return value


def _child(node: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    """The schema of property `key` of an object of schema `node` (None: undeclared)."""
    props = node.get("properties") or {}
    extra = node.get("additionalProperties")
    found: Mapping[str, Any] | None = props.get(key, extra if isinstance(extra, dict) else None)
    return found


def _prune_object(value: dict[str, Any], node: Mapping[str, Any], root: bool) -> None:
    keep = node.get("x-kubernetes-preserve-unknown-fields")
    embedded = root or node.get("x-kubernetes-embedded-resource")
    for key in list(value):
        if embedded and key in _META:
            continue
        child = _child(node, key)
        if child is None:
            if not keep:
                del value[key]
        elif value[key] is None and not child.get("nullable") and "default" not in child:
            del value[key]
    for key, prop in (node.get("properties") or {}).items():
        if "default" in prop and value.get(key) is None and not prop.get("nullable"):
            value[key] = copy_json(prop["default"])


# --------------------------------------------------------------------------- walking
def _places(
    value: Any, old: Any, schema: Mapping[str, Any]
) -> Iterator[tuple[str, Mapping[str, Any], Any, Any]]:
    """(path, schema node, value, old value or None) for every place with a value, the
    object first (iterative: objects nest as deep as the server takes)."""
    stack: list[tuple[str, Mapping[str, Any], Any, Any]] = [("", schema, value, old)]
    while stack:
        path, node, here, before = stack.pop()
        if here is None:
            continue
        yield path, node, here, before
        props = node.get("properties") or {}
        extra = node.get("additionalProperties")
        if isinstance(here, dict):
            for key, child in reversed(list(here.items())):
                sub = props.get(key, extra if isinstance(extra, dict) else None)
                if sub is None:
                    continue
                was = before.get(key) if isinstance(before, dict) else None
                where = _property(path, key) if key in props else f"{path}[{key}]"
                stack.append((where, sub, child, was))
        elif isinstance(here, list) and isinstance(node.get("items"), dict):
            items = node["items"]
            olds = _correlated(here, before, node)
            for index in reversed(range(len(here))):
                stack.append((f"{path}[{index}]", items, here[index], olds[index]))


def _property(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _correlated(items: list[Any], before: Any, node: Mapping[str, Any]) -> list[Any]:
    """The old item of each item: by key in a list-type map, none otherwise."""
    keys = node.get("x-kubernetes-list-map-keys")
    if node.get("x-kubernetes-list-type") != "map" or not keys or not isinstance(before, list):
        return [None] * len(items)

    def key_of(item: Any) -> Any:
        return tuple(repr(item.get(k)) for k in keys) if isinstance(item, dict) else None

    old_by_key = {key_of(item): item for item in before if isinstance(item, dict)}
    return [old_by_key.get(key_of(item)) for item in items]


# --------------------------------------------------------------------------- evaluating
def _evaluate(rule: Mapping[str, Any], value: Any, old: Any, path: str) -> RuleFailure | None:
    text = str(rule.get("rule", ""))
    transition = bool(_OLD_SELF.search(text))
    if transition and old is None and not rule.get("optionalOldSelf"):
        return None  # a transition rule runs only where there is an old value
    where = _extend(path, str(rule.get("fieldPath") or ""))
    reason = str(rule.get("reason") or "FieldValueInvalid")
    message = str(rule.get("message") or f"failed rule: {text}")
    try:
        program = _program(text)
        bindings = {"self": _to_cel(value)}
        if transition:
            bindings["oldSelf"] = _to_cel(old)
        result = program.evaluate(bindings)
    except Exception as exc:  # an evaluation error fails the rule, as on the server
        return RuleFailure(
            where, f"{message} (the rule could not be evaluated: {exc})", text, reason
        )
    if _truthy(result):
        return None
    return RuleFailure(where, message, text, reason)


def _truthy(result: Any) -> bool:
    from celpy import celtypes

    return isinstance(result, celtypes.BoolType) and bool(result)


def _extend(path: str, field_path: str) -> str:
    """A rule's place, extended by its ``fieldPath`` (``.spec.x``, ``.a['b']``, ``.c[0]``)."""
    rest = re.sub(r"\['([^']*)'\]", r"[\1]", field_path)
    return f"{path}{rest}".lstrip(".")


@cache
def _program(text: str) -> Any:
    """A compiled rule (cel-python's parser is slow; each rule is compiled once)."""
    environment = _environment()
    return environment.program(environment.compile(_strict_has(text)))


#: ``has(a.b.c)``: a selection whose receiver (``a.b``) is itself a selection.
_NESTED_HAS = re.compile(r"\bhas\((\w+(?:\.\w+)+)\.(\w+)\)")


def _strict_has(text: str) -> str:
    """The rule with ``has(a.b.c)`` evaluated as the API server's CEL does: an error when
    ``a.b`` itself is absent ("no such key"), which fails the rule. cel-python answers false
    there instead, so a rule such as ``!has(t.metadata.namespace)`` would pass an object
    the server refuses. ``(type(a.b) == type(a.b) ? false : false)`` is that error where
    ``a.b`` is absent and false otherwise (without comparing ``a.b`` itself, which may be
    deep), and ``false || error`` is the error in CEL."""
    return _NESTED_HAS.sub(r"(has(\1.\2) || (type(\1) == type(\1) ? false : false))", text)


@cache
def _environment() -> Any:
    import celpy  # imported when a rule is first evaluated: it brings a parser and RE2

    # cel-python's Environment sets the process's recursion limit to 2,500 (raising or
    # lowering it); the CRDs' rules need no more than Python's default, so the caller's
    # limit is kept.
    limit = sys.getrecursionlimit()
    try:
        return celpy.Environment()
    finally:
        sys.setrecursionlimit(limit)


def _to_cel(value: Any) -> Any:
    """JSON data as CEL values (as ``celpy.adapter.json_to_cel``, but iterative)."""
    from celpy import celtypes

    def scalar(item: Any) -> Any:
        if isinstance(item, bool):
            return celtypes.BoolType(item)
        if isinstance(item, float):
            return celtypes.DoubleType(item)
        if isinstance(item, int):
            return celtypes.IntType(item)
        if isinstance(item, str):
            return celtypes.StringType(item)
        return None

    def empty(item: Any) -> Any:
        return celtypes.MapType() if isinstance(item, dict) else celtypes.ListType()

    if not isinstance(value, dict | list):
        return scalar(value)
    root = empty(value)
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in items:
            if isinstance(item, dict | list):
                converted = empty(item)
                stack.append((item, converted))
            else:
                converted = scalar(item)
            if isinstance(target, dict):
                target[celtypes.StringType(str(key))] = converted
            else:
                target.append(converted)
    return root
