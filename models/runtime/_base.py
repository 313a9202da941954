"""Base classes of every generated model.

Why lazy: creating a pydantic class costs about half a millisecond, and one
kind embeds hundreds of types, so every cross-file type reference in the
generated code is imported only for type checkers (``if TYPE_CHECKING``) and
listed in the module's ``_LAZY_NAMES``. The first time a model's schema is
needed, :func:`resolve_lazy_names` imports those names into the module, for
that module and (through the same hook on every model) for each one it uses.

Every import in a generated package is relative (``_LAZY_NAMES`` holds relative module
names too), so the same code works under whatever name the package is generated as.

Reading and writing Kubernetes JSON (``model_validate``, ``model_validate_json``,
``to_dict``, ``to_json``) goes through the checks of the ``_json`` module: values
of fields this version does not know are JSON the API server would take (finite numbers,
at most 10,000 levels), an unknown key that happens to be an attribute's Python name stays
an unknown key, and objects as deep as the API server accepts are read and written back.
"""

from __future__ import annotations

import importlib
import sys
import threading
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    PlainValidator,
    ValidationError,
    model_validator,
)
from pydantic_core import (
    CoreSchema,
    PydanticCustomError,
    PydanticSerializationError,
    core_schema,
    to_jsonable_python,
)

from . import _lazy
from ._json import (
    INT64_UNIONS,
    MAX_DEPTH,
    JsonDepthError,
    ValidationPass,
    check_json,
    copy_json,
    current_pass,
    deepest,
    dumps,
    loads,
    numbers_in_range,
    render_path,
)

if TYPE_CHECKING:
    from ._registry import ResourceInfo

__all__ = ["KubeModel", "KubeResource", "resolve_lazy_names"]

_resolved: set[str] = set()
_EXTRA = "__pydantic_extra__"
_lock = threading.RLock()


def resolve_lazy_names(module_name: str) -> None:
    """Bind the names a generated module imports only for type checking."""
    if module_name in _resolved:
        return
    with _lock:
        if module_name in _resolved:
            return
        module = sys.modules[module_name]
        lazy: dict[str, str] = getattr(module, "_LAZY_NAMES", {})
        for name, source in lazy.items():
            if name not in module.__dict__:
                imported = importlib.import_module(source, module.__package__)
                setattr(module, name, getattr(imported, name))
        _resolved.add(module_name)


_PASS = current_pass()


def _unknown_field(value: Any) -> Any:
    state = _PASS.get()
    if state is not None:
        state.extras = True
        if state.text_checked:
            return value  # parsed from text holding no number check_json refuses
    check_json(value)
    return value


class KubeModel(BaseModel):
    """A Kubernetes object or part of one.

    Unknown fields are kept and written back (``extra="allow"``), attributes are
    snake_case with the JSON names as aliases (both accepted on input), dumps use
    the JSON names, and nothing is added on dump that was not set. Error messages
    never show the input (``hide_input_in_errors``): rendering a huge or self-repeating
    value could take longer than the whole validation; ``errors()`` still holds it.
    """

    model_config = ConfigDict(
        extra="allow",
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        defer_build=True,
        protected_namespaces=(),
        hide_input_in_errors=True,
        # An attribute set after validation is checked as the field is on input: a NaN
        # assigned to a field would otherwise be written as null (a patch then deletes it).
        validate_assignment=True,
    )

    #: Values of unknown fields: any JSON the API server would take.
    __pydantic_extra__: dict[str, Annotated[Any, PlainValidator(_unknown_field)]] = Field(
        init=False
    )

    def __setattr__(self, name: str, value: Any) -> None:
        # pydantic (2.14) validating an assignment reads the unknown fields' own dict (kept
        # in the instance's `__dict__`, as the annotation above hides BaseModel's slot) as
        # one more unknown field, `__pydantic_extra__`, where a dump would write it.
        before = self.__dict__.get(_EXTRA)
        had = before is not None and _EXTRA in before
        super().__setattr__(name, value)
        extra = self.__dict__.get(_EXTRA)
        if not had and extra is not None:
            extra.pop(_EXTRA, None)

    @classmethod
    def model_rebuild(
        cls,
        *,
        force: bool = False,
        raise_errors: bool = True,
        _parent_namespace_depth: int = 2,
        _types_namespace: Any = None,
    ) -> bool | None:
        resolve_lazy_names(cls.__module__)
        return super().model_rebuild(
            force=force,
            raise_errors=raise_errors,
            _parent_namespace_depth=0,
            _types_namespace=_types_namespace,
        )

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler, /
    ) -> CoreSchema:
        resolve_lazy_names(cls.__module__)
        return handler(source)

    @classmethod
    def model_validate(
        cls,
        obj: Any,
        *,
        strict: bool | None = None,
        extra: Any = None,
        from_attributes: bool | None = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> Self:
        """Validate Kubernetes JSON: keys are JSON names only, so an unknown key that
        happens to look like an attribute (``min_replicas``) is kept as written."""
        state, token = _begin()
        try:
            result = super().model_validate(
                obj,
                strict=strict,
                from_attributes=from_attributes,
                context=context,
                by_alias=by_alias,
                by_name=False if by_name is None else by_name,
                **({} if extra is None else {"extra": extra}),
            )
        except ValidationError as exc:
            raise _relocated(exc) from None
        finally:
            _end(token)
        if state is not None:
            _after(cls, result, obj, state)
        return result

    @classmethod
    def model_validate_json(
        cls,
        json_data: str | bytes | bytearray,
        *,
        strict: bool | None = None,
        extra: Any = None,
        context: Any | None = None,
        by_alias: bool | None = None,
        by_name: bool | None = None,
    ) -> Self:
        """Like :meth:`model_validate`, from JSON text (of any depth the API server takes)."""
        state, token = _begin()
        if state is not None:
            state.text_checked = numbers_in_range(json_data)
        options: dict[str, Any] = {"strict": strict, "context": context, "by_alias": by_alias}
        options["by_name"] = False if by_name is None else by_name
        try:
            result = super().model_validate_json(
                json_data, **options, **({} if extra is None else {"extra": extra})
            )
        except ValidationError as exc:
            if not _too_deep_for_the_parser(exc):
                raise _relocated(exc) from None
            deep = True
        else:
            deep = False
        finally:
            _end(token)
        if deep:
            # pydantic's parser stops at about 200 levels; the API server takes 10,000.
            try:
                data = loads(json_data)
            except JsonDepthError as too_deep:
                raise _depth_error(cls, too_deep.path) from None
            return cls.model_validate(data, **options, extra=extra)
        if state is not None and (state.extras or state.deep):
            import json  # here, not at import: most model imports never read JSON text

            _after(cls, result, json.loads(json_data), state)
        return result

    @classmethod
    def validate_json_lazily(cls, json_data: str | bytes | bytearray) -> Self:
        """Like :meth:`model_validate_json` (the same checks, the same errors at the same
        places), for reading many objects: the models inside are made when first read, and
        until then each part costs what its JSON costs (see ``_lazy``)."""
        validator = _lazy.json_validator(cls)
        if validator is None:  # a rule that only runs on models: read it eagerly
            return cls.model_validate_json(json_data)
        state, token = _begin()
        # Parsed once into plain JSON, which is kept; the validator checks it (its own
        # output, the same JSON again, is dropped). Text with NaN or Infinity is parsed
        # again with them; text that does not parse at all (or is too deep) goes through
        # the validator's parser, for the same errors as model_validate_json.
        data = _lazy.parse(json_data, allow_inf_nan=False)
        literals = data is None
        if literals:
            data = _lazy.parse(json_data, allow_inf_nan=True)
        if state is not None:
            state.text_checked = numbers_in_range(json_data, literals=literals)
        try:
            if data is not None:
                validator.validate_python(data)
            else:
                data = validator.validate_json(json_data)
        except ValidationError as exc:
            if not _too_deep_for_the_parser(exc):
                raise _relocated(_lazy.model_errors(cls, exc)) from None
            data = None
        finally:
            _end(token)
        if data is None:  # deeper than pydantic's parser goes
            try:
                parsed = loads(json_data)
            except JsonDepthError as too_deep:
                raise _depth_error(cls, too_deep.path) from None
            state, token = _begin()
            try:
                data = validator.validate_python(parsed)
            except ValidationError as exc:
                raise _relocated(_lazy.model_errors(cls, exc)) from None
            finally:
                _end(token)
        if state is not None and state.deep:
            depth, path = deepest(data)
            if depth > MAX_DEPTH:
                raise _depth_error(cls, path)
        made: Self = _lazy.make(cls, data)
        return made

    def to_dict(self) -> dict[str, Any]:
        """The object as Kubernetes JSON: JSON names, only the fields that were set.

        An object built without validation (``model_construct``) of a class whose validator
        was never needed is written by walking its fields: building the class's serializer
        would first generate its whole schema (for a pod, most of a command's start-up)."""
        if not type(self).__pydantic_complete__:
            return _plain(self)
        try:
            return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        except (ValueError, PydanticSerializationError) as exc:
            if not _too_deep_to_serialize(exc):
                raise
            return _plain(self)

    def to_json(self) -> str:
        """Like :meth:`to_dict`, serialised."""
        if not type(self).__pydantic_complete__:
            return dumps(_plain(self))
        try:
            return self.model_dump_json(by_alias=True, exclude_unset=True)
        except (ValueError, PydanticSerializationError) as exc:
            if not _too_deep_to_serialize(exc):
                raise
            return dumps(_plain(self))

    # A lazily read object (validate_json_lazily) keeps the checked JSON of its models until
    # they are read. Dumps by JSON name write that JSON as it is (serialize_as_any: by the
    # value's own type, so a kept dict is written as the dict it is); the other dumps, and
    # equality, repr and iteration, which look at models, make them first.
    def model_dump(self, **options: Any) -> dict[str, Any]:
        _settle_for(self, options)
        options.setdefault("serialize_as_any", True)
        dumped: dict[str, Any] = super().model_dump(**options)
        return dumped

    def model_dump_json(self, **options: Any) -> str:
        _settle_for(self, options)
        options.setdefault("serialize_as_any", True)
        dumped: str = super().model_dump_json(**options)
        return dumped

    def __eq__(self, other: object) -> bool:
        _lazy.settle(self)
        _lazy.settle(other)
        return super().__eq__(other)

    def __repr_args__(self) -> Any:
        _lazy.settle(self)
        return super().__repr_args__()

    def __iter__(self) -> Any:
        _lazy.settle(self)
        return super().__iter__()

    def __getstate__(self) -> dict[Any, Any]:
        # Another process may never have read this class lazily: send models, not JSON.
        _lazy.settle_deep(self)
        return super().__getstate__()


def _settle_for(model: KubeModel, options: dict[str, Any]) -> None:
    """Make the pending models below ``model`` before a dump that needs them as models: any
    but the JSON one (by JSON name, only the fields set), which writes kept JSON as it is."""
    if (
        not options.get("exclude_unset")
        or options.get("by_alias") is False
        or options.get("include") is not None
        or options.get("exclude") is not None
        or options.get("exclude_none")
        or options.get("exclude_defaults")
        or options.get("round_trip")
    ):
        _lazy.settle_deep(model)


# --------------------------------------------------------------------------- one validation
def _begin() -> tuple[ValidationPass | None, Any]:
    """Start noting what the validators see, unless an outer call already does. A pass over
    checked text is not shared: what a nested call reads did not come from that text."""
    outer = _PASS.get()
    if outer is not None and not outer.text_checked:
        return None, None
    state = ValidationPass()
    return state, _PASS.set(state)


def _end(token: Any) -> None:
    if token is not None:
        _PASS.reset(token)


def _after(cls: type[KubeModel], result: KubeModel, data: Any, state: ValidationPass) -> None:
    """The checks that need the whole object, run only when a validator asked for them."""
    if state.deep:
        depth, path = deepest(data)
        if depth > MAX_DEPTH:
            raise _depth_error(cls, path)
    if state.extras:
        _unset_shadowed_fields(result, data)


def _depth_error(cls: type[KubeModel], path: tuple[str | int, ...]) -> ValidationError:
    error = PydanticCustomError(
        "json_depth",
        "Input nests deeper than {limit} levels (the API server's limit) at {at}",
        {"limit": MAX_DEPTH, "at": render_path(path)},
    )
    return ValidationError.from_exception_data(
        cls.__name__, [{"type": error, "loc": path[:8], "input": None}], hide_input=True
    )


def _unset_shadowed_fields(model: KubeModel, data: Any, levels: int = 4) -> None:
    """pydantic counts an unknown key in the fields set; when that key is an attribute's
    Python name (``stop_policy`` beside ``stopPolicy``), the attribute would then be
    written as ``null``. Unmark such attributes the input did not set by their JSON name."""
    if not isinstance(data, Mapping):
        return
    fields = type(model).model_fields
    extra = model.__pydantic_extra__
    if extra:
        for name in extra:
            info = fields.get(name)
            if info is not None and info.alias not in (None, name) and info.alias not in data:
                model.__pydantic_fields_set__.discard(name)
    for name in model.__pydantic_fields_set__:
        info = fields.get(name)
        key = name if info is None else (info.alias or name)
        if info is not None and key in data:
            _unset_shadowed_in(getattr(model, name), data[key], levels)


def _unset_shadowed_in(value: Any, data: Any, levels: int) -> None:
    if isinstance(value, KubeModel):
        _unset_shadowed_fields(value, data)
    elif levels and isinstance(value, list) and isinstance(data, list):
        for item, raw in zip(value, data, strict=False):
            if isinstance(item, KubeModel | list | dict):
                _unset_shadowed_in(item, raw, levels - 1)
    elif levels and isinstance(value, dict) and isinstance(data, Mapping):
        for key, item in value.items():
            if isinstance(item, KubeModel | list | dict) and key in data:
                _unset_shadowed_in(item, data[key], levels - 1)


_KNOWN_ERRORS = frozenset(typing.get_args(core_schema.ErrorType))


_INT64_RANGE = (
    "int64_range",
    "Input should be an integer from -2^63 to 2^63-1 (the API server's int64)",
)


def _beyond_int64(error: Any) -> bool:
    """An integer refused by a quantity's or int-or-string's union (pydantic-core checks
    them without Python): out of range, since any other integer is taken."""
    return error["type"] in INT64_UNIONS and type(error.get("input")) is int


def _relocated(exc: ValidationError) -> ValidationError:
    """Errors that name a place inside the value they were raised for (a duplicate list
    key, NaN deep in a free-form value) get that place appended to their location; an
    integer a quantity refuses is reported as out of int64's range, which it is."""
    errors = exc.errors()
    if not any("where" in (error.get("ctx") or {}) or _beyond_int64(error) for error in errors):
        return exc
    details: list[Any] = []
    for error in errors:
        ctx = dict(error.get("ctx") or {})
        loc = (*error["loc"], *ctx.pop("where", ()))
        if _beyond_int64(error):
            custom = PydanticCustomError(*_INT64_RANGE)
            details.append({"type": custom, "loc": loc, "input": error["input"]})
            continue
        if error["type"] in _KNOWN_ERRORS:
            detail = {"type": error["type"], "loc": loc, "input": error["input"]}
            if ctx:
                detail["ctx"] = ctx
        else:
            custom = PydanticCustomError(error["type"], error["msg"])
            detail = {"type": custom, "loc": loc, "input": error["input"]}
        details.append(detail)
    try:
        return ValidationError.from_exception_data(exc.title, details, hide_input=True)
    except (TypeError, ValueError, KeyError):
        return exc


def _too_deep_for_the_parser(exc: ValidationError) -> bool:
    errors = exc.errors()
    return (
        len(errors) == 1
        and errors[0]["type"] == "json_invalid"
        and "recursion limit" in errors[0]["msg"]
    )


def _too_deep_to_serialize(exc: Exception) -> bool:
    return "serialization depth" in str(exc)


# --------------------------------------------------------------------------- deep objects
def _plain(model: KubeModel) -> dict[str, Any]:
    """What ``to_dict`` gives, for objects too deep for pydantic's serializer: the fields
    set, by JSON name, in declaration order, then the unknown fields."""
    out: dict[str, Any] = {}
    fields_set = model.__pydantic_fields_set__
    for name, info in type(model).model_fields.items():
        if name in fields_set:
            out[info.serialization_alias or info.alias or name] = copy_json(
                getattr(model, name), _plain_leaf
            )
    for key, value in (model.__pydantic_extra__ or {}).items():
        out[key] = copy_json(value, _plain_leaf)
    return out


def _plain_leaf(value: Any) -> Any:
    if isinstance(value, KubeModel):
        return _plain(value)
    return to_jsonable_python(value)


def _resource_json_form(cls: type[KubeResource]) -> _lazy.JsonForm:
    """What ``KubeResource._mark_type_fields_set`` does on a resource's checked JSON."""
    scale: dict[str, list[str]] | None = getattr(cls, "__scale_paths__", None)

    def check_scale(data: dict[str, Any]) -> dict[str, Any]:
        if scale:
            _check_scale(data, scale)
        return data

    return _lazy.JsonForm(check_scale if scale else None, frozenset(("api_version", "kind")))


class KubeResource(KubeModel):
    """A top-level resource: ``apiVersion`` and ``kind`` are always written."""

    @classmethod
    def resource_info(cls) -> ResourceInfo:
        """Group, version, plural, scope and subresources of this kind."""
        from ._registry import lookup

        return lookup(cls.model_fields["api_version"].default, cls.model_fields["kind"].default)

    def _mark_type_fields_set(self) -> KubeResource:
        # apiVersion and kind identify the object; a dump must always carry them,
        # even when the caller relied on the defaults.
        self.__pydantic_fields_set__.update(("api_version", "kind"))
        scale: dict[str, list[str]] | None = getattr(type(self), "__scale_paths__", None)
        if scale:
            _check_scale(self, scale)
        return self

    _mark_type_fields_set.__json_form__ = _resource_json_form  # type: ignore[attr-defined]
    _mark_type_fields_set = model_validator(mode="after")(  # type: ignore[assignment]
        _mark_type_fields_set
    )


_MISSING = object()


def _check_scale(
    resource: KubeResource | Mapping[str, Any], paths: Mapping[str, list[str]]
) -> None:
    """The scale subresource's rules, which the API server checks on every write: the
    replicas it reads (``specReplicasPath``, ``statusReplicasPath``) are integers from 0 to
    2^31-1, not floats; the selector (``labelSelectorPath``) is a string."""
    from ._types import json_field

    for name, path in sorted(paths.items()):
        value: Any = resource
        for key in path:
            if isinstance(value, KubeModel):
                value = json_field(value, key, _MISSING)
            elif isinstance(value, Mapping):
                value = value.get(key, _MISSING)
            else:
                value = None  # not an object: the API server cannot read the path either
                break
            if value is _MISSING:
                break
        if value is _MISSING:
            continue
        if name == "labelSelectorPath":
            ok = isinstance(value, str)
            wanted = "a string (the scale subresource's label selector)"
        else:
            ok = type(value) is int and 0 <= value <= 2**31 - 1
            wanted = "an integer from 0 to 2147483647 (the scale subresource's replicas)"
        if not ok:
            raise PydanticCustomError(
                "scale_subresource", f"Input should be {wanted}", {"where": tuple(path)}
            )
