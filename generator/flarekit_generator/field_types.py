"""Python types and fields of the generated classes: an IR node as a type expression (with
its constraints and the classes it refers to), and the attributes of one class.

Why apart from :mod:`flarekit_generator.plan`: how one schema reads as a Python annotation is
a concern of its own, used by both the Kubernetes and the family planners.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from flarekit_generator.ir import Node
from flarekit_generator.k8s_types import QUANTITY_PATTERN
from flarekit_generator.naming import snake_case

__all__ = ["FieldPlan", "TypeRenderer", "build_fields", "cel_rules", "field_doc"]


@dataclass
class FieldPlan:
    """One attribute of a generated class."""

    attr: str
    json_name: str
    annotation: str
    required: bool
    doc: str


# --------------------------------------------------------------------------- types
class TypeRenderer:
    """Renders IR nodes as Python type expressions, noting class references."""

    def __init__(self, resolve_class: Any) -> None:
        self._resolve_class = resolve_class  # (node, role) -> (module, class name) | None

    def render(self, node: Node, role: tuple[str, ...], refs: set[tuple[str, str]]) -> str:
        shape = node.shape
        if node.core_type is not None or shape == "object":
            target: tuple[str, str] | None = self._resolve_class(node, role)
            if target is None:
                return _object_size(node, "JsonObject")
            refs.add(target)
            return _object_size(node, target[1])
        if shape == "array":
            assert node.items is not None
            inner = self.render(node.items, role, refs)
            return _with_constraints(
                f"list[{inner}]",
                min_len=node.min_items,
                max_len=node.max_items,
                extra=_list_type(node),
            )
        if shape == "map":
            assert node.values is not None
            inner = self.render(node.values, role, refs)
            return _with_constraints(
                f"dict[str, {inner}]", min_len=node.min_properties, max_len=node.max_properties
            )
        if shape == "free":
            base = "EmbeddedResource" if node.embedded_resource else "JsonObject"
            return _object_size(node, base)
        if shape == "any":
            return "JsonValue"
        if shape == "boolean":
            return "Boolean"
        if shape == "string":
            return _string_type(node)
        if shape == "int-or-string":
            if node.pattern == QUANTITY_PATTERN:
                return "Quantity"
            if node.pattern:
                return f"Annotated[int | str, int_or_string_matching({_pyrepr(node.pattern)})]"
            if node.enum:
                return f"Integer | {_string_type(node)}"
            return "IntOrString"
        if shape == "integer":
            base = {"int32": "Int32", "int64": "Int64"}.get(node.format or "", "Integer")
            return _numeric(base, node)
        if shape == "number":
            if node.enum:
                return _literal(node.enum)
            float32 = node.format == "float"
            if node.minimum is None and node.maximum is None:
                return "Float32" if float32 else "Number"
            bounds = _bounds(node)[2:] + (", float32=True" if float32 else "")
            return f"Annotated[int | float, number_in_range({bounds})]"
        raise ValueError(f"unhandled shape {shape}")


def _list_type(node: Node) -> str | None:
    """The uniqueness check of ``x-kubernetes-list-type: set`` or ``map``."""
    if node.list_type == "set":
        return "list_set()"
    if node.list_type == "map" and node.list_map_keys:
        items = node.items
        keys = ", ".join(json.dumps(k) for k in node.list_map_keys)
        defaults = {}
        if items is not None:
            for key in node.list_map_keys:
                child = items.properties.get(key)
                if child is not None and child.has_default:
                    defaults[key] = child.default
        if defaults:
            return f"list_map({keys}, defaults={_pyrepr_value(defaults)})"
        return f"list_map({keys})"
    return None


def _object_size(node: Node, base: str) -> str:
    """An object's ``minProperties``/``maxProperties``, counted as the API server counts:
    after defaulting, and without the unknown fields it prunes."""
    if node.min_properties is None and node.max_properties is None:
        return base
    args = []
    if node.min_properties is not None:
        args.append(f"min_properties={node.min_properties}")
    if node.max_properties is not None:
        args.append(f"max_properties={node.max_properties}")
    defaulted = tuple(name for name, child in sorted(node.properties.items()) if child.has_default)
    if defaulted:
        args.append("defaulted=(" + "".join(f"{json.dumps(d)}, " for d in defaulted) + ")")
    if node.shape == "object" and node.preserve_unknown:
        args.append("keeps_unknown=True")
    return f"Annotated[{base}, object_size({', '.join(args)})]"


def _pyrepr_value(value: Any) -> str:
    """A Python literal of JSON data."""
    return repr(value)


def _literal(values: tuple[Any, ...]) -> str:
    return "Literal[" + ", ".join(json.dumps(v) for v in values) + "]"


def _string_type(node: Node) -> str:
    if node.enum:
        return _literal(node.enum)
    args = []
    if node.pattern is not None:
        args.append(f"pattern={_pyrepr(node.pattern)}")
    if node.min_length is not None:
        args.append(f"min_length={node.min_length}")
    if node.max_length is not None:
        args.append(f"max_length={node.max_length}")
    if node.format == "date-time" and not args:
        return "DateTime"
    if not args:
        return "str"
    return f"Annotated[str, Field({', '.join(args)})]"


def _bounds(node: Node) -> str:
    out = ""
    if node.minimum is not None:
        out += f", {'gt' if node.exclusive_minimum else 'ge'}={_num(node.minimum)}"
    if node.maximum is not None:
        out += f", {'lt' if node.exclusive_maximum else 'le'}={_num(node.maximum)}"
    return out


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def _numeric(base: str, node: Node) -> str:
    if node.enum:
        # Checked exactly, so True and 1.0 are not taken for 1.
        choices = ", ".join(json.dumps(v) for v in node.enum)
        return f"Annotated[{_literal(node.enum)}, one_of({choices})]"
    bounds = _bounds(node)
    return f"Annotated[{base}, Field({bounds[2:]})]" if bounds else base


def _with_constraints(
    expr: str, *, min_len: int | None, max_len: int | None, extra: str | None = None
) -> str:
    args = []
    if min_len is not None:
        args.append(f"min_length={min_len}")
    if max_len is not None:
        args.append(f"max_length={max_len}")
    metadata = [f"Field({', '.join(args)})"] if args else []
    if extra:
        metadata.append(extra)
    return f"Annotated[{expr}, {', '.join(metadata)}]" if metadata else expr


def _pyrepr(text: str) -> str:
    """A Python string literal, raw where that reads better."""
    if "\\" in text and '"' not in text and not text.endswith("\\"):
        return 'r"' + text + '"'
    return json.dumps(text)


# --------------------------------------------------------------------------- docs
def field_doc(node: Node) -> str:
    notes = []
    if node.has_default:
        notes.append(f"Server default: ``{json.dumps(node.default)}``.")
    if node.list_type == "map" and node.list_map_keys:
        keys = ", ".join(f"``{k}``" for k in node.list_map_keys)
        notes.append(
            f"A list keyed by {keys}: no two items have the same key, and patches merge "
            "items with the same key."
        )
    elif node.list_type == "set":
        notes.append("A set: items are unique.")
    elif node.list_type == "atomic":
        notes.append("Atomic: patches replace the whole list.")
    if node.map_type == "atomic":
        notes.append("Atomic: patches replace the whole map.")
    elif node.map_type == "granular":
        notes.append("Granular: patches merge keys.")
    rules = cel_rules(node) if node.shape not in ("object",) or node.core_type else ()
    if rules:
        notes.append(
            "Server-side rules (CEL, checked by the API server only): "
            + "; ".join(f"``{rule}``" for rule in rules)
        )
    return "\n\n".join([node.description, " ".join(notes)] if notes else [node.description]).strip()


def cel_rules(node: Node) -> tuple[str, ...]:
    """The CEL rules (`x-kubernetes-validations`) of `node`, as text for the docstring: the
    server enforces them, the client documents them."""
    out = []
    for rule in node.validations:
        text = rule.get("rule", "")
        message = rule.get("message") or rule.get("messageExpression")
        out.append(f"{text}  ({message})" if message else str(text))
    return tuple(out)


# --------------------------------------------------------------------------- fields
def build_fields(
    node: Node,
    renderer: TypeRenderer,
    role: tuple[str, ...],
    refs: set[tuple[str, str]],
    child_role: Any,
    skip: frozenset[str] = frozenset(),
) -> list[FieldPlan]:
    """Fields of an object node; attribute names made unique within the class."""
    fields: list[FieldPlan] = []
    taken: set[str] = set()
    for json_name in sorted(node.properties):
        if json_name in skip:
            continue
        child = node.properties[json_name]
        attr = snake_case(json_name)
        while attr in taken:
            attr += "_"
        taken.add(attr)
        annotation = renderer.render(child, child_role(role, json_name, child), refs)
        # The API server applies defaults before it checks required fields.
        required = json_name in node.required and not child.has_default
        if not required or child.nullable:
            annotation = f"{annotation} | None" if annotation != "JsonValue" else annotation
        fields.append(FieldPlan(attr, json_name, annotation, required, field_doc(child)))
    return fields


# --------------------------------------------------------------------------- Kubernetes
