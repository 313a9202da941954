"""Reading the YAML and JSON files users name (``-f``, kubeconfigs), bounded against hostile ones.

Why: a 515-byte YAML file whose aliases refer to aliases ("billion laughs") expands to
billions of values as soon as anything walks it, a file can nest ten thousand levels deep, be
encoded in Latin-1, or be tens of megabytes. Each of these must end in one clear line, fast,
without exhausting memory. So a file is read with explicit bounds:

* **size**: at most :data:`MAX_BYTES`, checked before parsing;
* **encoding**: UTF-8, or UTF-16/UTF-32 as YAML detects them (byte order mark, or the zero
  bytes of an ASCII first character); anything else names the first bad byte's line;
* **nesting**: at most :data:`MAX_DEPTH` levels (libyaml's own limit, applied to JSON and to
  the pure-Python YAML parser too; Python's own recursive walks of data, such as ``==`` and
  ``copy.deepcopy``, stop near there as well);
* **aliases**: an alias may not refer to itself, and all aliases together may add at most
  :data:`MAX_ALIAS_NODES` values to the document; checked on the parsed node graph, where an
  alias is one shared node, before any value is built.

JSON is read with the standard library's parser (fast even at tens of megabytes), YAML with
PyYAML's libyaml-based parser where present. For YAML without anchors, aliases or explicit
tags (nearly every configuration file), values are built straight from the parser's events,
which is about five times faster than letting PyYAML compose a node for each value first; the
values are the same, as scalars are resolved and built by PyYAML's own safe constructor.
Anything else goes through PyYAML's full safe loader. Errors are :class:`InputError`, whose
message names the file and what is wrong and never shows its content.
"""

from __future__ import annotations

import codecs
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import flarekit_models

if TYPE_CHECKING:
    import yaml

__all__ = [
    "MAX_ALIAS_NODES",
    "MAX_BYTES",
    "MAX_DEPTH",
    "InputError",
    "InputTooLarge",
    "decode",
    "load_text",
    "read_file",
]

#: The largest file read (bytes).
MAX_BYTES = 64 * 1024 * 1024
#: The deepest nesting read (the top-level mapping or list is level 1): libyaml's limit.
MAX_DEPTH = 1000
#: How many values aliases may add to a document beyond the ones written out.
MAX_ALIAS_NODES = 1_000_000


class InputError(ValueError):
    """A file that cannot be read as YAML or JSON; the message is one line saying why."""


class InputTooLarge(InputError):
    """Input beyond one of the bounds: size, nesting or alias expansion."""


def read_file(path: str | Path, what: str, limit: int = MAX_BYTES) -> bytes:
    """The bytes of ``path`` (``-`` is standard input), refused beyond ``limit``."""
    try:
        if str(path) == "-":
            stream = getattr(sys.stdin, "buffer", None)  # a text-only stdin has no buffer
            data = stream.read(limit + 1) if stream else sys.stdin.read(limit + 1).encode()
        else:
            with Path(path).open("rb") as stream:
                data = stream.read(limit + 1)
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise InputTooLarge(f"{what} is larger than {limit // (1024 * 1024)} MiB")
    return data


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def _encoding(data: bytes) -> tuple[str, int]:
    """The encoding YAML 1.2 (section 5.2) detects, and the length of the byte order mark."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name, len(bom)
    head = data[:4]
    if len(head) == 4 and head[:3] == b"\0\0\0":
        return "utf-32-be", 0
    if len(head) == 4 and head[1:] == b"\0\0\0":
        return "utf-32-le", 0
    if len(head) >= 2 and head[0] == 0:
        return "utf-16-be", 0
    if len(head) >= 2 and head[1] == 0:
        return "utf-16-le", 0
    return "utf-8", 0


def decode(data: bytes, what: str) -> str:
    """Text of a YAML/JSON file: UTF-8, UTF-16 or UTF-32, else a message naming the bad byte."""
    name, skip = _encoding(data)
    try:
        return data[skip:].decode(name)
    except UnicodeDecodeError as exc:
        where = data[: skip + exc.start]
        line = where.count(b"\n") + 1 if name == "utf-8" else None
        place = f"line {line}" if line is not None else f"byte {skip + exc.start}"
        bad = data[skip + exc.start : skip + exc.start + 1].hex()
        raise InputError(
            f"{what} is not valid {name.upper()} (byte 0x{bad} at {place}); save it as UTF-8"
        ) from None


def load_text(text: str, what: str) -> object:
    """The one document in ``text``: JSON if it is JSON, else YAML (bounded, see the module).

    Any YAML value (a mapping, a list, a date, ...): callers check that it is what they read.
    """
    stripped = text.lstrip(" \t\r\n\ufeff")
    if stripped[:1] in ("{", "["):
        found, value = _json(stripped, what)
        if found:
            return value
    return _yaml(text, what)


def _json(text: str, what: str) -> tuple[bool, object]:
    def no_constants(name: str) -> NoReturn:
        raise ValueError(name)

    try:
        return True, json.loads(text, parse_constant=no_constants)
    except RecursionError:
        pass  # deeper than the C parser goes: read it without recursion below
    except ValueError:
        return False, None  # not JSON (YAML flow syntax such as {a: 1}, or NaN): YAML decides
    try:
        return True, flarekit_models.load_json(text, max_depth=MAX_DEPTH)
    except flarekit_models.JsonDepthError:
        raise InputTooLarge(f"{what} nests deeper than {MAX_DEPTH} levels") from None
    except ValueError:
        return False, None


def _yaml(text: str, what: str) -> object:
    import yaml

    if yaml.__with_libyaml__:
        if "&" not in text:
            try:
                return _from_events(text, what)
            except _Unusual:
                pass  # read it again with the full loader
        loader = yaml.CSafeLoader(text)
    else:
        if _flow_depth(text) > MAX_DEPTH:
            # The pure-Python scanner's work grows with the square of the flow depth.
            raise InputTooLarge(f"{what} nests deeper than {MAX_DEPTH} levels")
        try:
            loader = _pure_loader()(text)  # checks every character first
        except yaml.YAMLError as exc:
            raise _unmarked(exc, text, what) from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if "&" in text:  # no anchor, no alias: nothing to expand
            _check_aliases(node, what)
        return loader.construct_document(node)
    except InputError:
        raise
    except yaml.MarkedYAMLError as exc:
        raise _marked(exc, what) from None
    except yaml.YAMLError as exc:
        raise _unmarked(exc, text, what) from None
    except RecursionError:
        raise InputTooLarge(f"{what} nests deeper than {MAX_DEPTH} levels") from None
    except (ValueError, TypeError, OverflowError) as exc:
        # Values the YAML types cannot hold: an int of 10,000 digits, a date such as
        # 2024-02-30, a list used as a mapping key.
        raise InputError(f"{what} has a value YAML cannot read: {_first_line(exc)}") from None
    finally:
        loader.dispose()


class _Unusual(Exception):
    """A YAML feature the event reader leaves to PyYAML's full loader."""


def _from_events(text: str, what: str) -> object:
    """The one document in ``text``, built from libyaml's events (see the module doc)."""
    import yaml

    loader = yaml.CSafeLoader(text)
    try:
        return _build(loader)
    except (_Unusual, InputError):
        raise
    except yaml.MarkedYAMLError as exc:
        raise _marked(exc, what) from None
    except yaml.YAMLError as exc:
        raise _unmarked(exc, text, what) from None
    except (ValueError, TypeError, OverflowError) as exc:
        raise InputError(f"{what} has a value YAML cannot read: {_first_line(exc)}") from None
    finally:
        loader.dispose()


def _unmarked(exc: yaml.YAMLError, text: str, what: str) -> InputError:
    """A reader error (a character YAML does not allow, such as a control character) as one
    line naming the character and its line; another unmarked error by its first line."""
    import yaml

    if isinstance(exc, yaml.reader.ReaderError) and isinstance(exc.character, int):
        # PyYAML counts characters, libyaml bytes of the UTF-8 text it was given.
        if exc.encoding == "unicode":
            before = text[: exc.position]
        else:
            encoded = text.encode("utf-8", "surrogatepass")[: exc.position]
            before = encoded.decode("utf-8", "replace")
        line = before.count("\n") + 1
        return InputError(
            f"{what} has a character YAML does not allow (U+{exc.character:04X} at line {line})"
        )
    return InputError(f"{what} is not valid YAML or JSON: {_first_line(exc)}")


def _marked(exc: yaml.MarkedYAMLError, what: str) -> InputError:
    """A parser error as one line; libyaml's nesting limit is a bound, not a syntax error."""
    if "maximum nesting depth" in str(exc.problem or ""):
        return InputTooLarge(f"{what} nests deeper than {MAX_DEPTH} levels")
    return InputError(f"{what} is not valid YAML or JSON: {_yaml_problem(exc)}")


_STR = "tag:yaml.org,2002:str"
_PLAIN_TAGS = (None, "!")
_NO_KEY = object()


def _build(loader: yaml.CSafeLoader) -> object:
    from yaml import ScalarNode, events

    resolvers = loader.yaml_implicit_resolvers
    get = loader.get_event
    get()  # stream start
    event = get()
    if isinstance(event, events.StreamEndEvent):
        return None
    # Open containers, and for mappings the key waiting for its value.
    containers: list[dict[object, object] | list[object]] = []
    keys: list[object] = []
    result: object = None
    while True:
        event = get()
        value: object
        if isinstance(event, events.ScalarEvent):
            if event.anchor is not None or event.tag not in _PLAIN_TAGS:
                raise _Unusual
            value = text = event.value
            if event.implicit[0] and (not text or text[0] in resolvers):
                # (PyYAML's stubs leave `resolve` untyped and type libyaml's marks apart.)
                tag: str = loader.resolve(ScalarNode, text, event.implicit)  # type: ignore[no-untyped-call]
                if tag != _STR:
                    if tag == "tag:yaml.org,2002:merge":
                        raise _Unusual
                    start, end = event.start_mark, event.end_mark
                    node = ScalarNode(tag, text, start, end, event.style)  # type: ignore[arg-type]
                    value = loader.construct_object(node, deep=True)
        elif isinstance(event, (events.MappingStartEvent, events.SequenceStartEvent)):
            if event.anchor is not None or event.tag not in _PLAIN_TAGS:
                raise _Unusual
            containers.append({} if isinstance(event, events.MappingStartEvent) else [])
            keys.append(_NO_KEY)
            continue
        elif isinstance(event, (events.MappingEndEvent, events.SequenceEndEvent)):
            value = containers.pop()
            keys.pop()
        elif isinstance(event, events.DocumentEndEvent):
            break
        else:  # an alias
            raise _Unusual
        if not containers:
            result = value
            continue
        top = containers[-1]
        if isinstance(top, list):
            top.append(value)
        elif keys[-1] is _NO_KEY:
            if isinstance(value, (dict, list)):
                raise _Unusual  # a mapping or list as a key: the full loader says why not
            keys[-1] = value
        else:
            top[keys[-1]] = value
            keys[-1] = _NO_KEY
    if not isinstance(get(), events.StreamEndEvent):
        raise _Unusual  # a second document: the full loader refuses it in its words
    return result


def _yaml_problem(exc: yaml.MarkedYAMLError) -> str:
    problem = str(exc.problem or exc.context or "invalid")
    mark = exc.problem_mark or exc.context_mark
    if mark is not None:
        problem += f" (line {mark.line + 1}, column {mark.column + 1})"
    return _first_line(problem)


def _first_line(value: object) -> str:
    text = str(value).strip().splitlines()
    line = text[0] if text else "invalid"
    return line if len(line) <= 200 else line[:197] + "..."


def _check_aliases(root: yaml.Node, what: str) -> None:
    """Refuse an alias that contains itself, and aliases that together add more than
    MAX_ALIAS_NODES values: sizes are counted once per node, so a bomb costs nothing."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        key = id(node)
        children = _children(node)
        if closing:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in children)
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise InputTooLarge(f"{what} has an alias that refers to itself")
        open_nodes.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in open_nodes:
                raise InputTooLarge(f"{what} has an alias that refers to itself")
            if id(child) not in sizes:
                stack.append((child, False))
    expanded, written = sizes[id(root)], len(sizes)
    if expanded - written > MAX_ALIAS_NODES:
        raise InputTooLarge(
            f"{what} uses aliases that expand it from {written} to {_count(expanded)} values "
            f"(at most {MAX_ALIAS_NODES:,} more are allowed)"
        )


def _children(node: yaml.Node) -> list[yaml.Node]:
    value = node.value
    if not isinstance(value, list):
        return []
    if value and isinstance(value[0], tuple):
        return [part for pair in value for part in pair]
    return value


def _count(number: int) -> str:
    return f"{number:,}" if number < 10**15 else f"about 10^{len(str(number)) - 1}"


_FLOW_TOKENS = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:''|[^'])*'|(?<!\S)#[^\n]*|[][{}]")


def _flow_depth(text: str) -> int:
    """The deepest nesting of YAML flow brackets (quoted text and comments skipped)."""
    depth = deepest = 0
    for token in _FLOW_TOKENS.finditer(text):
        char = token.group()
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
    return deepest


def _pure_loader() -> type:
    import yaml

    class PureLoader(yaml.SafeLoader):
        """The pure-Python loader, held to libyaml's nesting limit."""

        _depth = 0

        def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    raise RecursionError
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

    return PureLoader
