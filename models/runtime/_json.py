"""JSON as the API server takes it: finite numbers, string keys, at most 10,000 levels deep.

Why a module of its own: free-form parts of an object (``x-kubernetes-preserve-unknown-fields``,
embedded resources, fields this version does not know) can hold any JSON, and pydantic's
parser and serializer give up on nesting deeper than about 200 levels, while the API server
takes 10,000 (the nesting limit of the JSON decoder it uses, ``sigs.k8s.io/json``, the same as
Go's ``encoding/json``: an object or array opened at depth 10,001 is refused with "exceeded max
depth"). The walks here are iterative, so any depth the server accepts can be read, checked
and written back, and anything deeper is refused while it is read, with a clear error.

:func:`check_json` checks one free-form value (NaN and Infinity would be written as ``null``;
keys must be strings); :func:`loads` and :func:`dumps` read and write JSON of any allowed
depth; :func:`deepest` finds where an object nests too deeply.
"""

from __future__ import annotations

import contextvars
import math
import re
from collections.abc import Callable, Iterator
from typing import Any

from pydantic_core import PydanticCustomError

__all__ = [
    "INT64_UNIONS",
    "MAX_DEPTH",
    "JsonDepthError",
    "ValidationPass",
    "check_json",
    "check_parsed",
    "copy_json",
    "current_pass",
    "deepest",
    "dumps",
    "loads",
    "numbers_in_range",
]

#: Errors of the models' int-or-string unions (quantities, int-or-strings) that pydantic-core
#: raises for an integer beyond int64 too (see ``_types._Checked``): the models' entry points
#: report such an integer as ``int64_range``. Here, so that reading them needs no ``_types``.
INT64_UNIONS = ("quantity", "int_or_string")
#: The deepest nesting of objects and arrays the API server decodes (the whole object counts:
#: the top-level object is level 1).
MAX_DEPTH = 10_000
#: Free-form values deeper than this are checked against MAX_DEPTH from the top of the object.
SHALLOW = 200
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

Path = tuple[str | int, ...]

# What reading and writing need is bound by _ready() on first use, not at import: importing
# the json package and compiling the patterns cost more than the rest of this module, and
# every model import loads this module while few processes read or write deep JSON here.
#: The standard library's JSON string reader and writer (their C versions where present).
_scanstring: Callable[[str, int, bool], tuple[str, int]]
_encode_basestring: Callable[[str], str]
_WHITESPACE: re.Pattern[str]
_NUMBER: re.Pattern[str]


def _ready() -> None:
    """Bind the reader's and writer's helpers (once; a second binding is harmless)."""
    global _scanstring, _encode_basestring, _WHITESPACE, _NUMBER
    if "_NUMBER" in globals():
        return
    import json.decoder
    import json.encoder

    _scanstring = json.decoder.scanstring  # type: ignore[attr-defined]
    _encode_basestring = json.encoder.encode_basestring
    _WHITESPACE = re.compile(r"[ \t\n\r]*")
    _NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][-+]?[0-9]+)?")


class JsonDepthError(ValueError):
    """JSON nested deeper than the API server accepts."""

    def __init__(self, depth: int, path: Path) -> None:
        self.depth = depth
        self.path = path
        super().__init__(
            f"nesting deeper than {MAX_DEPTH} levels (the API server's limit) at "
            f"{render_path(path)}"
        )


def render_path(path: Path, limit: int = 8) -> str:
    """``spec.template[0].x``, eliding the middle of very long paths."""

    def render(parts: Path) -> str:
        out = ""
        for part in parts:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
        return out

    if len(path) > 2 * limit:
        return (
            f"{render(path[:limit])} ... ({len(path) - 2 * limit} more) ... {render(path[-limit:])}"
        )
    return render(path) or "<top>"


# --------------------------------------------------------------------------- one validation
class ValidationPass:
    """What the validators of one ``model_validate`` call noticed, for the checks that need
    the whole object: deep free-form values, and unknown keys. (A plain class: a dataclass
    would be built while the module is imported, by every model import.)"""

    __slots__ = ("deep", "extras", "notes", "text_checked")

    def __init__(self, deep: bool = False, extras: bool = False) -> None:
        self.deep = deep
        self.extras = extras
        self.notes: list[Any] = []
        #: The pass reads JSON text that ``numbers_in_range`` found holds no number
        #: ``check_json`` could refuse (see ``check_parsed``).
        self.text_checked = False


_PASS: contextvars.ContextVar[ValidationPass | None] = contextvars.ContextVar(
    "models_validation_pass", default=None
)


def current_pass() -> contextvars.ContextVar[ValidationPass | None]:
    return _PASS


# --------------------------------------------------------------------------- checks
def _located(kind: str, message: str, path: Path) -> PydanticCustomError:
    return PydanticCustomError(kind, message, {"where": path, "at": render_path(path)})


def check_json(value: Any) -> int:
    """Check a free-form value: finite numbers, string keys, depth; returns its depth.

    Errors name the place inside the value (``ctx["where"]``, appended to the field's
    location by ``KubeModel.model_validate``).
    """
    if not isinstance(value, dict | list):
        if isinstance(value, float) and not math.isfinite(value):
            raise _located("finite_number", "Input should be a finite number (JSON has none)", ())
        if type(value) is int and not _INT64_MIN <= value <= _INT64_MAX:
            try:
                float(value)
            except OverflowError:
                raise _located(
                    "finite_number",
                    "Input should be a number within the range of a 64-bit float",
                    (),
                ) from None
        return 0
    deepest_seen = 0
    # (container, depth, parent entry, key in parent): parents only to name a bad place.
    stack: list[tuple[Any, int, Any, str | int | None]] = [(value, 1, None, None)]
    while stack:
        entry = stack.pop()
        node, depth = entry[0], entry[1]
        if depth > deepest_seen:
            deepest_seen = depth
            if depth > MAX_DEPTH:
                path = _path_of(entry)
                raise _located(
                    "json_depth",
                    f"Input nests deeper than {MAX_DEPTH} levels (the API server's limit) at {{at}}",
                    path,
                )
        if isinstance(node, dict):
            for key in node:
                if type(key) is not str:
                    raise _located(
                        "json_key", "Input should have string keys only at {at}", _path_of(entry)
                    )
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1, entry, key))
            elif isinstance(child, float) and not math.isfinite(child):
                raise _located(
                    "finite_number",
                    "Input should be a finite number at {at} (JSON has no NaN or Infinity)",
                    (*_path_of(entry), key),
                )
            elif type(child) is int and not _INT64_MIN <= child <= _INT64_MAX:
                try:
                    float(child)  # beyond int64 the API server decodes a float64
                except OverflowError:
                    raise _located(
                        "finite_number",
                        "Input should be a number within the range of a 64-bit float at {at}",
                        (*_path_of(entry), key),
                    ) from None
    if deepest_seen > SHALLOW:
        state = _PASS.get()
        if state is not None:
            state.deep = True
    return deepest_seen


def check_parsed(value: Any) -> None:
    """:func:`check_json` for a free-form value of the object being validated, skipped when
    the value was parsed from JSON text already known to pass it.

    Why: walking every free-form value in Python (``metadata.managedFields`` is one in every
    object a server returns) cost about a third of reading a list of objects. For a value
    pydantic parsed from text, the walk can only refuse a number: keys are strings in JSON,
    and pydantic's parser stops at 201 levels, below :data:`SHALLOW` for any field. Text in
    which :func:`numbers_in_range` finds no such number needs no walk.
    """
    state = _PASS.get()
    if state is None or not state.text_checked:
        check_json(value)


#: JSON text mapped to the shape of its numbers: digits to ``0``, exponent letters to ``e``,
#: signs to ``+`` (other bytes stay as they are).
_NUMBER_SHAPES = bytes.maketrans(b"0123456789eE+-", b"0000000000ee++")
#: Shapes of a number ``check_json`` might refuse: 19 digits in a row (an integer beyond
#: int64 has at least as many; a float needs more than 18 before its point or a three-digit
#: exponent to overflow), or a three-digit exponent.
_RISKY_SHAPES = (b"0" * 19, b"e000", b"e+000")
#: Literals pydantic's parser reads as non-finite numbers (``-Infinity`` includes one).
_RISKY_LITERALS = (b"NaN", b"Infinity")
#: Bytes a number or one of those literals is made of, and the bytes that may surround a
#: value outside a string (a value is preceded by ``:``, ``[``, ``,`` or space and followed by
#: ``,``, ``]``, ``}`` or space).
_TOKEN_BYTES = frozenset(b"0123456789.eE+-NaInfity")
_AROUND_A_VALUE = frozenset(b":,[]{} \t\n\r")


def numbers_in_range(text: str | bytes | bytearray, literals: bool = True) -> bool:
    """Whether every number in the JSON ``text`` is finite and within int64, judged from the
    text alone with a few C-speed scans (``literals=False``: ``NaN`` and ``Infinity`` are
    not looked for, for text read by a parser that refuses them).

    A number is risky if it is ``NaN`` or ``Infinity`` (pydantic's parser reads both), has
    19 digits in a row or a three-digit exponent. Each place where such a shape appears is
    looked at: it can be a value only if the run of number characters around it stands
    between the bytes that surround values; inside a string (a uid such as ``"5e952d"``) it
    is not one. Conservative: a string holding ``" 1e400,"`` makes the answer False, which
    only means the values get walked.
    """
    if isinstance(text, str):
        try:
            data = text.encode()
        except UnicodeEncodeError:
            return False
    else:
        data = bytes(text)
    shapes = data.translate(_NUMBER_SHAPES)
    scans = ((data, _RISKY_LITERALS if literals else ()), (shapes, _RISKY_SHAPES))
    for haystack, needles in scans:
        for needle in needles:
            at = haystack.find(needle)
            while at != -1:
                end = _value_end(data, at, at + len(needle))
                if end is None:
                    return False
                at = haystack.find(needle, end)
    return True


def _value_end(data: bytes, start: int, end: int) -> int | None:
    """None when the number characters around ``data[start:end]`` can be a value; else
    where they end (the search goes on from there, so no byte is looked at twice)."""
    while start > 0 and data[start - 1] in _TOKEN_BYTES:
        start -= 1
    while end < len(data) and data[end] in _TOKEN_BYTES:
        end += 1
    before = start == 0 or data[start - 1] in _AROUND_A_VALUE
    after = end == len(data) or data[end] in _AROUND_A_VALUE
    return None if before and after else end


def _path_of(entry: Any) -> Path:
    keys: list[str | int] = []
    while entry is not None and entry[3] is not None:
        keys.append(entry[3])
        entry = entry[2]
    return tuple(reversed(keys))


def deepest(value: Any) -> tuple[int, Path]:
    """The nesting depth of ``value`` (a top-level object is 1) and the path to the first
    container found at that depth."""
    if not isinstance(value, dict | list):
        return 0, ()
    best: tuple[int, Any] = (1, (value, 1, None, None))
    stack: list[tuple[Any, int, Any, str | int | None]] = [best[1]]
    while stack:
        entry = stack.pop()
        node, depth = entry[0], entry[1]
        if depth > best[0]:
            best = (depth, entry)
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1, entry, key))
    return best[0], _path_of(best[1])


def copy_json(value: Any, leaf: Any = None) -> Any:
    """A deep copy of JSON-like data of any depth (``leaf`` converts other values)."""
    if not isinstance(value, dict | list | tuple):
        return leaf(value) if leaf is not None and not _plain(value) else value
    root: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, child in items:
            if isinstance(child, dict | list | tuple):
                copy: Any = {} if isinstance(child, dict) else []
                stack.append((child, copy))
            elif leaf is not None and not _plain(child):
                copy = leaf(child)
            else:
                copy = child
            if isinstance(target, dict):
                target[key] = copy
            else:
                target.append(copy)
    return root


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


# --------------------------------------------------------------------------- reading
_LITERALS = {"true": True, "false": False, "null": None}


class _Syntax(ValueError):
    def __init__(self, message: str, text: str, pos: int) -> None:
        line = text.count("\n", 0, pos) + 1
        column = pos - text.rfind("\n", 0, pos)
        super().__init__(f"{message} at line {line} column {column}")


def loads(text: str | bytes | bytearray, max_depth: int = MAX_DEPTH) -> Any:
    """Parse JSON of any depth up to ``max_depth`` without recursion (a repeated key: the
    last wins, as in Go); deeper input raises :class:`JsonDepthError` as soon as it is seen."""
    _ready()
    if not isinstance(text, str):
        text = bytes(text).decode("utf-8")
    end = len(text)
    pos = _skip(text, 0)
    # Open containers: [container, key being filled (objects), key of it in its parent].
    stack: list[list[Any]] = []
    while True:
        if pos >= end:
            raise _Syntax("unexpected end of JSON input", text, pos)
        char = text[pos]
        value: Any
        if char == "{" or char == "[":
            if len(stack) + 1 > max_depth:
                raise JsonDepthError(len(stack) + 1, _open_path(stack))
            container: Any = {} if char == "{" else []
            pos = _skip(text, pos + 1)
            if pos < end and text[pos] == ("}" if char == "{" else "]"):
                value, pos = container, pos + 1
            else:
                stack.append([container, None, _slot(stack)])
                if char == "{":
                    pos = _read_key(text, pos, stack[-1])
                continue
        elif char == '"':
            value, pos = _scanstring(text, pos + 1, True)
        elif char == "-" or "0" <= char <= "9":
            found = _NUMBER.match(text, pos)
            if found is None:
                raise _Syntax("invalid number", text, pos)
            if found.group(2) or found.group(3):
                value = float(found.group(0))
                if not math.isfinite(value):
                    raise _Syntax("number out of range", text, pos)
            else:
                value = int(found.group(0))
            pos = found.end()
        else:
            for word, literal in _LITERALS.items():
                if text.startswith(word, pos):
                    value, pos = literal, pos + len(word)
                    break
            else:
                raise _Syntax(f"invalid character {char!r}", text, pos)
        # A complete value: store it, then close every container that ends after it.
        while stack:
            top = stack[-1]
            container = top[0]
            if isinstance(container, dict):
                container[top[1]] = value
            else:
                container.append(value)
            pos = _skip(text, pos)
            if pos < end and text[pos] == ",":
                pos = _skip(text, pos + 1)
                if isinstance(container, dict):
                    pos = _read_key(text, pos, top)
                break
            closing = "}" if isinstance(container, dict) else "]"
            if pos < end and text[pos] == closing:
                pos += 1
                stack.pop()
                value = container
                continue
            raise _Syntax(f"expected ',' or {closing!r}", text, pos)
        else:
            pos = _skip(text, pos)
            if pos != end:
                raise _Syntax("extra data after the JSON value", text, pos)
            return value


def _skip(text: str, pos: int) -> int:
    found = _WHITESPACE.match(text, pos)
    assert found is not None  # the pattern matches the empty string
    return found.end()


def _slot(stack: list[list[Any]]) -> str | int | None:
    """The key (or index) the next value takes in the innermost open container."""
    if not stack:
        return None
    container, key, _ = stack[-1]
    return key if isinstance(container, dict) else len(container)


def _open_path(stack: list[list[Any]]) -> Path:
    keys: list[str | int] = [entry[2] for entry in stack[1:]]
    slot = _slot(stack)
    return (*keys, slot) if slot is not None else tuple(keys)


def _read_key(text: str, pos: int, top: list[Any]) -> int:
    if pos >= len(text) or text[pos] != '"':
        raise _Syntax("expected a string key", text, pos)
    key, pos = _scanstring(text, pos + 1, True)
    pos = _skip(text, pos)
    if pos >= len(text) or text[pos] != ":":
        raise _Syntax("expected ':'", text, pos)
    top[1] = key
    return _skip(text, pos + 1)


# --------------------------------------------------------------------------- writing
def dumps(value: Any) -> str:
    """Compact JSON text of data of any depth (as ``json.dumps`` with no spaces and
    non-ASCII kept, which recurses and stops at about 1,000 levels)."""
    _ready()
    out: list[str] = []
    stack: list[Iterator[str]] = [_tokens(value)]
    while stack:
        try:
            token = next(stack[-1])
        except StopIteration:
            stack.pop()
            continue
        if isinstance(token, _Nested):
            stack.append(_tokens(token.value))
        else:
            out.append(token)
    return "".join(out)


class _Nested:
    """A container met while writing: the writer's loop descends into it (no recursion)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _tokens(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        yield "{"
        for index, (key, child) in enumerate(value.items()):
            if not isinstance(key, str):
                raise TypeError(f"keys must be strings, not {type(key).__name__}")
            yield ("," if index else "") + _encode_basestring(key) + ":"
            yield from _scalar_or_nested(child)
        yield "}"
    elif isinstance(value, list | tuple):
        yield "["
        for index, child in enumerate(value):
            if index:
                yield ","
            yield from _scalar_or_nested(child)
        yield "]"
    else:
        yield from _scalar_or_nested(value)


def _scalar_or_nested(value: Any) -> Iterator[Any]:
    if isinstance(value, dict | list | tuple):
        yield _Nested(value)
    elif isinstance(value, str):
        yield _encode_basestring(value)
    elif value is None:
        yield "null"
    elif isinstance(value, bool):
        yield "true" if value else "false"
    elif isinstance(value, int):
        yield int.__repr__(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("JSON has no NaN or Infinity")
        yield float.__repr__(value)
    else:
        raise TypeError(f"{type(value).__name__} is not JSON")
