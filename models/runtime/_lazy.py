"""Reading objects in bulk: checked in full at once, made into models as they are read.

Why: as eager pydantic models, a list of RayClusters holds 19 nested models per object, each
with a dict of every declared field (most of them None), a set of the fields set and a dict of
unknown fields: more than twice the memory of the same JSON as dicts, and most of the time it
takes to read it. :meth:`KubeModel.validate_json_lazily` checks an object exactly as
``model_validate_json`` does (every field and rule, the same errors at the same places), with
a validator derived from the model's own in which every model is a dict of the same fields
under their JSON names: what comes out is the checked JSON itself. The object is a real
instance of its class; a field that holds a model keeps its checked JSON until it is first
read, and is then made a model of the field's class the same way (nothing is checked twice).
An untouched part costs what its JSON costs.

Everything else sees a normal model: ``to_dict``/``to_json`` write the JSON kept (what the
server sent, by JSON name), ``==``, ``repr``, iteration, pickling and the less common dumps
make the pending fields first, copies carry them. A validator of a whole model must say how
it applies to JSON (a ``__json_form__`` attribute, see :class:`JsonForm`); a class with one
that does not is read eagerly, so an unknown rule is never skipped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from pydantic_core import (
    PydanticCustomError,
    PydanticUndefined,
    SchemaValidator,
    core_schema,
    from_json,
)

if TYPE_CHECKING:
    from ._base import KubeModel

__all__ = [
    "JsonForm",
    "json_validator",
    "make",
    "model_at",
    "model_errors",
    "parse",
    "pending_fields",
    "settle",
    "settle_deep",
]

_lock = threading.RLock()
#: Model class -> how to make its instances from checked JSON (None: read it eagerly).
_PLANS: dict[type, _Plan | None] = {}
#: Model class -> the validator of its JSON (None: read it eagerly).
_VALIDATORS: dict[type, SchemaValidator | None] = {}

_SUBSCHEMA_KEYS = (
    "schema",
    "items_schema",
    "keys_schema",
    "values_schema",
    "extras_schema",
    "lax_schema",
    "strict_schema",
    "json_schema",
    "python_schema",
)
_FUNCTIONS = ("function-after", "function-before", "function-wrap", "function-plain")
#: Keys of a schema node that hold no schema (a map of fields by name may use them as names).
_NOT_SCHEMAS = ("serialization", "metadata", "cls", "function", "default")


class NotReadableLazily(Exception):
    """A validator this module cannot apply to JSON: the class is read eagerly."""


@dataclass(frozen=True)
class JsonForm:
    """What a validator of a whole model does on the model's checked JSON: ``check`` (a
    function of the JSON dict that returns it or raises, None for nothing) and the fields
    it marks set (``marks``, attribute names). A model validator's ``__json_form__`` is a
    function of the model class returning one."""

    check: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    marks: frozenset[str] = frozenset()


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


class _Plan:
    """How to make instances of one class from its checked JSON."""

    __slots__ = (
        "aliases",
        "cls",
        "eager",
        "extra",
        "fields",
        "lists",
        "maps",
        "marks",
        "pending",
        "simple",
    )

    def __init__(self, cls: type) -> None:
        self.cls = cls
        #: (attribute, JSON name, default or _Factory), in declaration order.
        self.fields: list[tuple[str, str, Any]] = []
        self.aliases: dict[str, str] = {}
        self.extra = False
        self.marks: frozenset[str] = frozenset()
        #: Attribute -> model class: made on first read (see _Pending).
        self.pending: dict[str, type] = {}
        #: Attribute -> model class of a list's items: made with the object.
        self.lists: dict[str, type] = {}
        #: Attribute -> model class of a map's values: made with the object.
        self.maps: dict[str, type] = {}
        #: Attribute -> validator: models elsewhere (in a map, a union), validated as usual.
        self.eager: dict[str, _EagerField] = {}
        #: Whether every field is taken from the JSON as it is, or its plain default.
        self.simple = False


class _EagerField:
    """A field whose models sit where this module does not follow them (map values, union
    members): its checked JSON is validated into models when the object is made."""

    __slots__ = ("definitions", "schema", "validator")

    def __init__(self, schema: Any, definitions: dict[str, Any]) -> None:
        self.schema = schema
        self.definitions = definitions
        self.validator: SchemaValidator | None = None

    def __call__(self, value: Any) -> Any:
        from ._json import ValidationPass, current_pass

        if self.validator is None:
            whole = core_schema.definitions_schema(self.schema, list(self.definitions.values()))
            self.validator = SchemaValidator(whole)
        checked = ValidationPass()
        checked.text_checked = True  # the JSON was checked when it was read
        token = current_pass().set(checked)
        try:
            return self.validator.validate_python(value, by_name=False)
        finally:
            current_pass().reset(token)


class _Pending:
    """A field that holds a model: its checked JSON until first read (a data descriptor,
    so it is asked before the instance's ``__dict__``; invisible on the class, so pydantic's
    own class machinery never sees it)."""

    __slots__ = ("cls", "name")

    def __init__(self, name: str, cls: type) -> None:
        self.name = name
        self.cls = cls

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            raise AttributeError(self.name)
        values = obj.__dict__
        value = values[self.name]
        if type(value) is dict:
            value = values[self.name] = make(self.cls, value)
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = value


# --------------------------------------------------------------------------- making models
def make(cls: type[KubeModel], data: dict[str, Any]) -> Any:
    """An instance of ``cls`` from its checked JSON (see the module docstring)."""
    plan = _PLANS.get(cls)
    if plan is None:  # never planned: not from a lazy read, so check it as usual
        return cls.model_validate(data)
    aliases = plan.aliases
    values: dict[str, Any]
    if plan.simple:
        get = data.get
        values = {name: get(alias, default) for name, alias, default in plan.fields}
    else:
        values = {}
        for name, alias, default in plan.fields:
            value = data.get(alias, PydanticUndefined)
            if value is PydanticUndefined:
                value = default.make() if type(default) is _Factory else default
            elif value is not None and name in plan.lists:
                item = plan.lists[name]
                value = [make(item, entry) for entry in value]
            elif value is not None and name in plan.maps:
                item = plan.maps[name]
                value = {key: make(item, entry) for key, entry in value.items()}
            elif name in plan.eager:
                value = plan.eager[name](value)
            values[name] = value
    fields_set = {aliases[key] for key in data if key in aliases}
    extra: dict[str, Any] | None = None
    if plan.extra:
        extra = (
            {}
            if len(fields_set) == len(data)
            else {k: v for k, v in data.items() if k not in aliases}
        )
    if plan.marks:
        fields_set |= plan.marks
    obj = cls.__new__(cls)
    setter = object.__setattr__
    setter(obj, "__dict__", values)
    setter(obj, "__pydantic_fields_set__", fields_set)
    setter(obj, "__pydantic_extra__", extra)
    setter(obj, "__pydantic_private__", None)
    return obj


def pending_fields(obj: Any) -> Iterator[str]:
    """The fields of ``obj`` still holding checked JSON."""
    plan = _PLANS.get(type(obj))
    if plan is not None and plan.pending:
        values = obj.__dict__
        for name in plan.pending:
            if type(values.get(name)) is dict:
                yield name


def settle(obj: Any) -> None:
    """Make ``obj``'s pending fields models (one level: they may have pending fields)."""
    for name in list(pending_fields(obj)):
        getattr(obj, name)


def settle_deep(obj: Any) -> None:
    """Make every pending field below ``obj`` a model, through models, lists and dicts."""
    if not _PLANS:  # nothing was ever read lazily in this process
        return
    from pydantic import BaseModel

    todo = [obj]
    while todo:
        value = todo.pop()
        if isinstance(value, BaseModel):
            settle(value)
            todo.extend(value.__dict__.values())
        elif isinstance(value, list | tuple):
            todo.extend(item for item in value if isinstance(item, BaseModel | list | dict))
        elif isinstance(value, dict):
            todo.extend(item for item in value.values() if isinstance(item, BaseModel | list))


# --------------------------------------------------------------------------- planning
def json_validator(cls: type[KubeModel]) -> SchemaValidator | None:
    """The validator of ``cls``'s JSON, which returns the checked JSON (None: read eagerly)."""
    if cls in _VALIDATORS:
        return _VALIDATORS[cls]
    with _lock:
        if cls not in _VALIDATORS:
            _VALIDATORS[cls] = _build(cls)
    return _VALIDATORS[cls]


class _Context:
    """One class's schema being planned: its definitions and the plans made so far."""

    def __init__(self, definitions: dict[str, Any]) -> None:
        self.definitions = definitions
        self.plans: dict[type, _Plan] = {}


def _build(cls: type[KubeModel]) -> SchemaValidator | None:
    schema: Any = cls.__pydantic_core_schema__
    if not isinstance(schema, dict):  # pydantic's stand-in until the class is built
        cls.model_rebuild()
        schema = cls.__pydantic_core_schema__
    ctx = _Context({d["ref"]: d for d in schema.get("definitions", ()) if "ref" in d})
    try:
        if _plan_of_top(schema, ctx.definitions) is None:
            raise NotReadableLazily(cls)
        for model in _models(schema, ctx.definitions):
            _plan(model, ctx)
        as_json = _as_json(schema, ctx)
    except NotReadableLazily:
        return None
    config = core_schema.CoreConfig(title=cls.__name__, hide_input_in_errors=True)
    validator = SchemaValidator(as_json, config)
    for model_cls, plan in ctx.plans.items():
        if model_cls not in _PLANS:
            _PLANS[model_cls] = plan
            for name, child in plan.pending.items():
                type.__setattr__(model_cls, name, _Pending(name, child))
    return validator


def _resolve(schema: Any, definitions: dict[str, Any]) -> Any:
    while schema.get("type") == "definition-ref":
        schema = definitions[schema["schema_ref"]]
    return schema


def _model_in(schema: Any, definitions: dict[str, Any]) -> Any | None:
    """The ``model`` schema ``schema`` is (possibly behind a model validator), or None."""
    schema = _resolve(schema, definitions)
    while schema.get("type") in _FUNCTIONS and "schema" in schema:
        inner = _resolve(schema["schema"], definitions)
        if inner.get("type") != "model":
            return None
        schema = inner
    return schema if schema.get("type") == "model" else None


def _plan_of_top(schema: Any, definitions: dict[str, Any]) -> Any | None:
    if schema.get("type") == "definitions":
        schema = schema["schema"]
    return _model_in(schema, definitions)


def _models(schema: Any, definitions: dict[str, Any]) -> Iterator[Any]:
    """Every model schema in ``schema`` and its definitions."""
    seen: set[int] = set()
    todo = [schema, *definitions.values()]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.get("type") == "model":
                yield node
            schema_node = isinstance(node.get("type"), str)  # else a map of fields by name
            for key, value in node.items():
                if not schema_node or key not in _NOT_SCHEMAS:
                    todo.append(value)
        elif isinstance(node, list | tuple):
            todo.extend(node)


def _field_kind(schema: Any, definitions: dict[str, Any]) -> tuple[str, type | None]:
    """How a field's checked JSON becomes its value: ``("plain", None)`` as it is,
    ``("model", cls)`` on first read, ``("list", cls)`` / ``("map", cls)`` a list or map of
    models made at once, ``("eager", None)`` validated into models when the object is made."""
    node = _resolve(schema, definitions)
    while node.get("type") in ("default", "nullable") or (
        node.get("type") in _FUNCTIONS and "schema" in node and not _model_in(node, definitions)
    ):
        node = _resolve(node["schema"], definitions)
    model = _model_in(node, definitions)
    if model is not None:
        return "model", model["cls"]
    if node.get("type") in ("list", "dict"):
        key = "items_schema" if node["type"] == "list" else "values_schema"
        inner = node.get(key)
        item = _model_in(_resolve(inner, definitions), definitions) if inner else None
        if item is not None:
            return node["type"].replace("dict", "map"), item["cls"]
    if any(True for _ in _models(node, {})) or _refers(node):
        return "eager", None  # models inside maps or unions
    return "plain", None


def _refers(schema: Any) -> bool:
    """Whether ``schema`` refers to a definition (all of which here are models)."""
    todo = [schema]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            if node.get("type") == "definition-ref":
                return True
            schema_node = isinstance(node.get("type"), str)
            todo.extend(v for k, v in node.items() if not schema_node or k not in _NOT_SCHEMAS)
        elif isinstance(node, list | tuple):
            todo.extend(node)
    return False


def _plan(model: Any, ctx: _Context) -> None:
    cls = model["cls"]
    if cls in ctx.plans:
        return
    plan = ctx.plans[cls] = _Plan(cls)
    plan.extra = model.get("config", {}).get("extra_fields_behavior") == "allow"
    plan.simple = True
    infos = cls.__pydantic_fields__
    for name, field in model["schema"]["fields"].items():
        alias = field.get("validation_alias", name)
        if not isinstance(alias, str):
            raise NotReadableLazily(cls)
        info = infos[name]
        default: Any = info.default
        if info.default_factory is not None:
            default = _Factory(info.default_factory)
        elif isinstance(default, list | dict):
            default = _Factory(default.copy)
        plan.fields.append((name, alias, default))
        plan.aliases[alias] = name
        kind, child = _field_kind(field["schema"], ctx.definitions)
        if kind in ("list", "map", "eager") or isinstance(default, _Factory):
            plan.simple = False
        if kind == "model":
            plan.pending[name] = child  # type: ignore[assignment]
        elif kind == "list":
            plan.lists[name] = child  # type: ignore[assignment]
        elif kind == "map":
            plan.maps[name] = child  # type: ignore[assignment]
        elif kind == "eager":
            plan.eager[name] = _EagerField(field["schema"], ctx.definitions)


# --------------------------------------------------------------------------- the JSON validator
def _as_json(schema: Any, ctx: _Context) -> Any:
    """``schema`` with every model a typed dict of its fields by JSON name."""
    kind = schema.get("type")
    if kind == "model":
        return _model_as_dict(schema, ctx)
    if kind in _FUNCTIONS and "schema" in schema:
        model = _model_in(schema, ctx.definitions)
        if model is not None and _resolve(schema["schema"], ctx.definitions) is model:
            return _model_validator_as_json(schema, model, ctx)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("serialization", "metadata"):
            continue
        if key in _SUBSCHEMA_KEYS and isinstance(value, dict):
            out[key] = _as_json(value, ctx)
        elif key in ("choices", "steps", "definitions"):
            out[key] = [
                (
                    (_as_json(item[0], ctx), *item[1:])
                    if isinstance(item, tuple)
                    else _as_json(item, ctx)
                )
                for item in value
            ]
        elif key == "fields" and kind != "model-fields":
            out[key] = {k: {**f, "schema": _as_json(f["schema"], ctx)} for k, f in value.items()}
        else:
            out[key] = value
    return out


def _model_validator_as_json(schema: Any, model: Any, ctx: _Context) -> Any:
    function = schema["function"]["function"]
    form_of = getattr(function, "__json_form__", None)
    if form_of is None:
        raise NotReadableLazily(function)
    form: JsonForm = form_of(model["cls"])
    if form.marks:
        plan = ctx.plans[model["cls"]]
        plan.marks = plan.marks | form.marks
    inner = _as_json(schema["schema"], ctx)
    inner.pop("ref", None)
    out: Any = inner
    if form.check is not None:
        out = core_schema.no_info_after_validator_function(form.check, inner)
    if "ref" in schema:
        out["ref"] = schema["ref"]
    return out


def _model_as_dict(model: Any, ctx: _Context) -> Any:
    fields_schema = model["schema"]
    if fields_schema.get("type") != "model-fields":
        raise NotReadableLazily(model["cls"])
    fields = {}
    for name, field in fields_schema["fields"].items():
        alias = field.get("validation_alias", name)
        inner = field["schema"]
        required = inner.get("type") != "default"
        if not required:
            inner = inner["schema"]
        fields[alias] = core_schema.typed_dict_field(_as_json(inner, ctx), required=required)
    extra = model.get("config", {}).get("extra_fields_behavior", "ignore")
    extras = fields_schema.get("extras_schema") if extra == "allow" else None
    return core_schema.typed_dict_schema(
        fields,
        extras_schema=_as_json(extras, ctx) if extras is not None else None,
        extra_behavior=extra,
        ref=model.get("ref"),
    )


def model_at(cls: type, loc: tuple[str | int, ...]) -> type | None:
    """The model class whose JSON is expected at ``loc`` in an object of ``cls`` (None: no
    model there). The JSON validator reports a value that is not an object as ``dict_type``
    where the model reports ``model_type``; this finds where to say the latter."""
    current: type | None = cls
    items: type | None = None  # the model of a list's items or a map's values, next
    for part in loc:
        if items is not None:
            current, items = items, None
            continue
        plan = _PLANS.get(current) if current is not None else None
        name = plan.aliases.get(part) if plan is not None and isinstance(part, str) else None
        if plan is None or name is None:
            return None
        current = plan.pending.get(name)
        items = plan.lists.get(name) or plan.maps.get(name)
        if current is None and items is None:
            return None
    return current if items is None else None


# --------------------------------------------------------------------------- reading
def model_errors(cls: type[KubeModel], exc: ValidationError) -> ValidationError:
    """A lazy read's errors as the model's: a value that is not an object where a model is
    expected is ``model_type`` (the JSON validator, which reads it as a dict, says
    ``dict_type``)."""
    errors = exc.errors()
    models = [model_at(cls, tuple(e["loc"])) if e["type"] == "dict_type" else None for e in errors]
    if not any(models):
        return exc
    details: list[Any] = []
    for error, model in zip(errors, models, strict=True):
        detail = {k: error[k] for k in ("type", "loc", "input", "ctx") if k in error}
        if model is not None:
            detail = {**detail, "type": "model_type", "ctx": {"class_name": model.__name__}}
        elif error["type"] not in _known_errors():
            detail["type"] = PydanticCustomError(error["type"], error["msg"], error.get("ctx"))
            detail.pop("ctx", None)
        details.append(detail)
    try:
        return ValidationError.from_exception_data(exc.title, details, hide_input=True)
    except (TypeError, ValueError, KeyError):
        return exc


def parse(json_data: str | bytes | bytearray, *, allow_inf_nan: bool) -> Any:
    """JSON text parsed by pydantic-core (None when it does not parse)."""
    try:
        return from_json(json_data, allow_inf_nan=allow_inf_nan)
    except ValueError:
        return None


def _known_errors() -> frozenset[str]:
    import typing

    return frozenset(typing.get_args(core_schema.ErrorType))
