"""Label and field selectors, parsed and matched the way the Kubernetes API server does.

``FakeCluster`` filters list and watch results with these, so a selector that works against
the fake server behaves the same against a real cluster, and a malformed one fails with the
message the real API server would send back (as a ``ValueError`` the server turns into a
400 BadRequest).

Label selectors follow the full grammar of ``k8s.io/apimachinery/pkg/labels``::

    <selector>    ::= <requirement> | <requirement> "," <selector>
    <requirement> ::= ["!"] KEY [ ("in" | "notin") "(" VALUES ")" | ("=" | "==" | "!=") VALUE ]

plus the ``>`` / ``<`` integer comparisons the same parser accepts. Keys must be qualified
names (``[prefix/]name``), values valid label values. Field selectors for custom resources
support only ``metadata.name`` and ``metadata.namespace`` with ``=``, ``==`` and ``!=``.

Label keys and values are checked with the rules in ``_names``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flarekit_testing.apiserver._names import (
    go_quote,
    label_value_errors,
    qualified_name_errors,
)

__all__ = [
    "FieldSelector",
    "FieldTerm",
    "LabelSelector",
    "Requirement",
    "label_selector_from_dict",
    "parse_field_selector",
    "parse_label_selector",
]


def _invalid(path: str, value: str, detail: str) -> str:
    return f"{path}: Invalid value: {go_quote(value)}: {detail}"


def _aggregate(messages: list[str]) -> str:
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


# --- label selectors ------------------------------------------------------------------------

_EXISTS = "exists"
_DOES_NOT_EXIST = "!"
_OPERATORS_WITH_ONE_VALUE = ("=", "==", "!=", ">", "<")


@dataclass(frozen=True)
class Requirement:
    """One comma-separated term of a label selector."""

    key: str
    operator: str  # "=", "==", "!=", "in", "notin", "exists", "!", ">", "<"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in ("in", "=", "=="):
            return self.key in labels and labels[self.key] in self.values
        if op in ("notin", "!="):
            return self.key not in labels or labels[self.key] not in self.values
        if op == _EXISTS:
            return self.key in labels
        if op == _DOES_NOT_EXIST:
            return self.key not in labels
        if self.key not in labels:
            return False
        try:
            have = int(labels[self.key])
            want = int(self.values[0])
        except ValueError:
            return False
        return have > want if op == ">" else have < want

    def __str__(self) -> str:
        op = self.operator
        if op == _EXISTS:
            return self.key
        if op == _DOES_NOT_EXIST:
            return "!" + self.key
        joined = ",".join(sorted(self.values))
        if op in ("in", "notin"):
            return f"{self.key} {op} ({joined})"
        return f"{self.key}{op}{joined}"


@dataclass(frozen=True)
class LabelSelector:
    """A parsed label selector: all requirements must match (comma means AND)."""

    requirements: tuple[Requirement, ...] = ()

    @property
    def empty(self) -> bool:
        """True when the selector selects everything."""
        return not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


# Tokens of the upstream lexer.
_T_ERROR, _T_END, _T_CLOSE, _T_COMMA, _T_NOT, _T_DEQ, _T_EQ, _T_GT = range(8)
_T_ID, _T_IN, _T_LT, _T_NEQ, _T_NOTIN, _T_OPEN = range(8, 14)
_STRING_TO_TOKEN = {
    ")": _T_CLOSE,
    ",": _T_COMMA,
    "!": _T_NOT,
    "==": _T_DEQ,
    "=": _T_EQ,
    ">": _T_GT,
    "in": _T_IN,
    "<": _T_LT,
    "!=": _T_NEQ,
    "notin": _T_NOTIN,
    "(": _T_OPEN,
}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"


def _lex(text: str) -> list[tuple[int, str]]:
    items: list[tuple[int, str]] = []
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= n:
            items.append((_T_END, ""))
            return items
        if text[pos] in _SPECIAL:
            buf, last_tok, last_lit = "", -1, ""
            while pos < n and text[pos] in _SPECIAL:
                buf += text[pos]
                if buf in _STRING_TO_TOKEN:
                    last_tok, last_lit = _STRING_TO_TOKEN[buf], buf
                    pos += 1
                elif last_tok != -1:
                    break
                else:
                    pos += 1
            if last_tok == -1:
                items.append((_T_ERROR, f"error expected: keyword found '{buf}'"))
            else:
                items.append((last_tok, last_lit))
            continue
        start = pos
        while pos < n and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE:
            pos += 1
        word = text[start:pos]
        items.append((_STRING_TO_TOKEN.get(word, _T_ID), word))


class _LabelParser:
    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.pos = 0

    def _tok(self, values_context: bool, advance: bool) -> tuple[int, str]:
        tok, lit = self.items[self.pos]
        if advance:
            self.pos += 1
        if values_context and tok in (_T_IN, _T_NOTIN):
            tok = _T_ID
        return tok, lit

    def peek(self, values_context: bool = True) -> tuple[int, str]:
        return self._tok(values_context, advance=False)

    def take(self, values_context: bool = True) -> tuple[int, str]:
        return self._tok(values_context, advance=True)

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.peek()
            if tok in (_T_ID, _T_NOT):
                try:
                    reqs.append(self._requirement())
                except ValueError as err:
                    raise ValueError(f"unable to parse requirement: {err}") from None
                tok, lit = self.take()
                if tok == _T_END:
                    return reqs
                if tok == _T_COMMA:
                    tok2, lit2 = self.peek()
                    if tok2 not in (_T_ID, _T_NOT):
                        raise ValueError(f"found '{lit2}', expected: identifier after ','")
                else:
                    raise ValueError(f"found '{lit}', expected: ',' or 'end of string'")
            elif tok == _T_END:
                return reqs
            else:
                raise ValueError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def _requirement(self) -> Requirement:
        operator = ""
        tok, lit = self.take()
        if tok == _T_NOT:
            operator = _DOES_NOT_EXIST
            tok, lit = self.take()
        if tok != _T_ID:
            raise ValueError(f"found '{lit}', expected: identifier")
        key_errs = qualified_name_errors(lit)
        if key_errs:
            raise ValueError(_invalid("<nil>", lit, "; ".join(key_errs)))
        key = lit
        if operator == _DOES_NOT_EXIST:
            # Upstream returns here; whatever follows "!key" is then rejected by the outer
            # loop ("found '=', expected: ',' or 'end of string'").
            return _new_requirement(key, operator, [])
        if self.peek()[0] in (_T_END, _T_COMMA):
            return _new_requirement(key, _EXISTS, [])
        tok, lit = self.take(values_context=False)
        binary = {
            _T_IN: "in",
            _T_NOTIN: "notin",
            _T_EQ: "=",
            _T_DEQ: "==",
            _T_NEQ: "!=",
            _T_GT: ">",
            _T_LT: "<",
        }
        if tok not in binary:
            raise ValueError(f"found '{lit}', expected: {_BINARY_OPERATORS}")
        op = binary[tok]
        values = self._set_values() if op in ("in", "notin") else self._exact_value()
        return _new_requirement(key, op, values)

    def _set_values(self) -> list[str]:
        tok, lit = self.take()
        if tok != _T_OPEN:
            raise ValueError(f"found '{lit}' expected: '('")
        tok, lit = self.peek()
        if tok == _T_CLOSE:
            self.take()
            return [""]
        if tok not in (_T_ID, _T_COMMA):
            raise ValueError(f"found '{lit}', expected: ',', ')' or identifier")
        values: set[str] = set()
        while True:
            tok, lit2 = self.take()
            if tok == _T_ID:
                values.add(lit2)
                tok2, lit3 = self.peek()
                if tok2 == _T_COMMA:
                    continue
                if tok2 == _T_CLOSE:
                    break
                raise ValueError(f"found '{lit3}', expected: ',' or ')'")
            if tok == _T_COMMA:
                if not values:
                    values.add("")
                tok2, _ = self.peek()
                if tok2 == _T_CLOSE:
                    values.add("")
                    break
                if tok2 == _T_COMMA:
                    self.take()
                    values.add("")
                continue
            raise ValueError(f"found '{lit2}', expected: ',', or identifier")
        tok, _ = self.take()
        if tok != _T_CLOSE:
            raise ValueError(f"found '{lit}', expected: ')'")
        return sorted(values)

    def _exact_value(self) -> list[str]:
        tok, lit = self.peek()
        if tok in (_T_END, _T_COMMA):
            return [""]
        tok, lit = self.take()
        if tok == _T_ID:
            return [lit]
        raise ValueError(f"found '{lit}', expected: identifier")


def _new_requirement(key: str, op: str, values: list[str]) -> Requirement:
    """Validate like upstream ``labels.NewRequirement`` and build the requirement."""
    errs: list[str] = []
    key_errs = qualified_name_errors(key)
    if key_errs:
        errs.append(_invalid("key", key, "; ".join(key_errs)))
    if op in ("in", "notin") and not values:
        errs.append(
            "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"
        )
    if op in ("=", "==", "!=") and len(values) != 1:
        errs.append(
            "values: Invalid value: "
            + json.dumps(values)
            + ": exact-match compatibility requires one single value"
        )
    if op in (">", "<"):
        for i, v in enumerate(values):
            if not re.fullmatch(r"[+-]?[0-9]+", v):
                errs.append(
                    _invalid(
                        f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"
                    )
                )
    for i, v in enumerate(values):
        value_errs = label_value_errors(v)
        if value_errs:
            errs.append(_invalid(f"values[{i}][{key}]", v, "; ".join(value_errs)))
    if errs:
        raise ValueError(_aggregate(errs))
    return Requirement(key, op, tuple(values))


def parse_label_selector(text: str) -> LabelSelector:
    """Parse a label selector string (``labelSelector=`` query value).

    Raises ``ValueError`` with the API server's wording when ``text`` is malformed, e.g.
    ``unable to parse requirement: <nil>: Invalid value: "a b": name part must consist of ...``.
    The empty string selects everything.
    """
    reqs = _LabelParser(text).parse()
    reqs.sort(key=lambda r: r.key)  # upstream sorts by key for a deterministic form
    return LabelSelector(tuple(reqs))


_SELECTOR_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": _EXISTS, "DoesNotExist": "!"}


def label_selector_from_dict(sel: Mapping[str, Any]) -> str:
    """Turn a ``metav1.LabelSelector`` (``matchLabels`` / ``matchExpressions``) into a string.

    The result is the string form the API server accepts in ``labelSelector=``; an empty
    selector gives ``""`` (everything). Invalid keys, values or operators raise
    ``ValueError`` naming the problem, as ``metav1.LabelSelectorAsSelector`` does.
    """
    reqs: list[Requirement] = []
    match_labels = sel.get("matchLabels") or {}
    for key, value in match_labels.items():
        reqs.append(_new_requirement(str(key), "=", [str(value)]))
    for expr in sel.get("matchExpressions") or []:
        op_name = expr.get("operator")
        if op_name not in _SELECTOR_OPERATORS:
            raise ValueError(
                f"{go_quote(str(op_name))} is not a valid label selector operator "
                f"(supported: {', '.join(_SELECTOR_OPERATORS)})"
            )
        op = _SELECTOR_OPERATORS[op_name]
        values = [str(v) for v in (expr.get("values") or [])]
        if op in ("in", "notin") and not values:
            raise ValueError(
                f"matchExpressions with key {go_quote(str(expr.get('key')))}: "
                f"values must be non-empty for operator {op_name}"
            )
        if op in (_EXISTS, "!") and values:
            raise ValueError(
                f"matchExpressions with key {go_quote(str(expr.get('key')))}: "
                f"values must be empty for operator {op_name}"
            )
        reqs.append(_new_requirement(str(expr.get("key", "")), op, sorted(set(values))))
    reqs.sort(key=lambda r: r.key)
    return str(LabelSelector(tuple(reqs)))


# --- field selectors ------------------------------------------------------------------------

_KNOWN_FIELDS = ("metadata.name", "metadata.namespace")


@dataclass(frozen=True)
class FieldTerm:
    """``field op value`` with op ``=`` (also written ``==``) or ``!=``."""

    field: str
    operator: str  # "=" or "!="
    value: str

    def __str__(self) -> str:
        escaped = self.value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
        return f"{self.field}{self.operator}{escaped}"


@dataclass(frozen=True)
class FieldSelector:
    """A parsed field selector: all terms must hold."""

    terms: tuple[FieldTerm, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.terms

    #: field label -> dotted path in the object, for labels that are not paths themselves
    paths: Mapping[str, str] | None = None

    def matches(self, obj: Mapping[str, Any]) -> bool:
        for term in self.terms:
            path = (self.paths or {}).get(term.field, term.field)
            have = _field_value(obj, path)
            if (have == term.value) != (term.operator == "="):
                return False
        return True

    def __str__(self) -> str:
        return ",".join(str(t) for t in self.terms)


def _field_value(obj: Mapping[str, Any], path: str) -> str:
    """A field's value as the apiserver's field set renders it ("" when absent)."""
    node: Any = obj
    for part in path.split("."):
        if not isinstance(node, Mapping):
            return ""
        node = node.get(part)
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


def _split_terms(text: str) -> list[str]:
    terms: list[str] = []
    start, in_slash = 0, False
    for i, c in enumerate(text):
        if in_slash:
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _unescape(value: str) -> str:
    if not any(c in value for c in "\\,="):
        return value
    out: list[str] = []
    in_slash = False
    for c in value:
        if in_slash:
            if c not in "\\,=":
                raise ValueError(f"invalid field selector: invalid escape sequence: \\{c}")
            out.append(c)
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c in ",=":
            raise ValueError(f"invalid field selector: unescaped character in value: {ord(c)}")
        else:
            out.append(c)
    if in_slash:
        raise ValueError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_term(term: str) -> tuple[str, str, str] | None:
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def parse_field_selector(text: str, selectable: Mapping[str, str] | None = None) -> FieldSelector:
    """Parse a field selector (``fieldSelector=``).

    For a custom resource (``selectable`` None) only ``metadata.name`` and
    ``metadata.namespace`` are selectable, as for every CRD without ``selectableFields``. A
    built-in kind passes its selectable field labels, each mapped to the path it reads (pods:
    ``status.phase``, events: ``involvedObject.name``, ...). Other fields raise
    ``ValueError`` with the API server's message. Values may escape ``\\``, ``,`` and ``=``
    with a backslash.
    """
    terms: list[FieldTerm] = []
    parts = [p for p in _split_terms(text) if p] if text else []
    for part in sorted(parts):
        split = _split_term(part)
        if split is None:
            raise ValueError(f"invalid selector: '{text}'; can't understand '{part}'")
        lhs, op, rhs = split
        value = _unescape(rhs)
        if selectable is not None and lhs not in selectable:
            raise ValueError(f"field label not supported: {lhs}")
        if selectable is None and lhs not in _KNOWN_FIELDS:
            raise ValueError(
                f"{go_quote(lhs)} is not a known field selector: only "
                + ", ".join(go_quote(f) for f in _KNOWN_FIELDS)
            )
        terms.append(FieldTerm(lhs, "!=" if op == "!=" else "=", value))
    return FieldSelector(tuple(terms), selectable)
