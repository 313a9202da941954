"""The machinery every conversion shares: read the source, carry what it sets, build the target.

A conversion reads the source through its model (:func:`load_model`) and builds the target's
parts as models: :func:`made` reports a value the target rejects as a
:class:`ConversionError` with its path, :func:`unhandled` lists the fields of a part the
conversion has not carried yet (to refuse, or to :func:`carry` as unknown fields). Where the
two versions of a kind share most of their shape (:mod:`flarekit.compat._reshape`), the shared
part travels as the source's JSON: :func:`check_carried` walks it against the target's
declared fields, so that a field the source version declares but the target does not is
refused by name, while a field neither declares (kept by the models as an extra, e.g.
written by a newer server) travels on unchanged wherever its parent exists in the target;
:func:`build` validates it into the target model.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import NoReturn, TypeVar

from pydantic import ValidationError

from flarekit._json import JsonValue
from flarekit.compat._errors import ConversionError
from flarekit.compat._head import head_of
from flarekit.compat._paths import Schema, join, render, schema_of
from flarekit_models import KubeModel, KubeResource

__all__ = [
    "Context",
    "build",
    "carry",
    "check_carried",
    "load_model",
    "made",
    "unhandled",
]

M = TypeVar("M", bound=KubeResource)
P = TypeVar("P", bound=KubeModel)


@dataclass(frozen=True)
class Context:
    """Which pair a conversion runs for, and how it refuses a field."""

    source: Schema
    target: Schema

    @classmethod
    def of(cls, source: tuple[str, str], target: tuple[str, str]) -> Context:
        return cls(schema_of(*source), schema_of(*target))

    def refuse(self, path: str, reason: str) -> NoReturn:
        raise ConversionError(path, self.source.name, self.target.name, reason)


def load_model(obj: KubeModel | Mapping[str, JsonValue], model: type[M], ctx: Context) -> M:
    """The source object as its model (a copy of `obj` when it is one, else validated)."""
    head = head_of(obj)
    api_version, kind = ctx.source.api_version, ctx.source.kind
    got = (head.api_version or api_version, head.kind or kind)
    if got != (api_version, kind):
        raise ValueError(
            f"expected an object of apiVersion={api_version!r}, kind={kind!r}; "
            f"got apiVersion={got[0]!r}, kind={got[1]!r}"
        )
    if isinstance(obj, model):
        return obj.model_copy(deep=True)  # the caller's object is never changed or shared
    return model.model_validate(obj.to_dict() if isinstance(obj, KubeModel) else obj)


Unmove = Callable[[str], str]


def _identity(path: str) -> str:
    return path


def check_carried(data: Mapping[str, object], ctx: Context, unmove: Unmove = _identity) -> None:
    """Refuse every field of ``data`` the target does not declare but the source does.

    ``data`` is already in the target's shape; ``unmove`` maps a target schema path back to
    the source schema path it came from (for fields a conversion moved). Fields neither
    version declares are unknown extras and are carried; their insides are not inspected.
    """
    _walk(data, "", "", ctx, unmove)


def _walk(value: object, spath: str, ipath: str, ctx: Context, unmove: Unmove) -> None:
    target = ctx.target
    if spath and target.is_opaque(spath):
        return
    if isinstance(value, list):
        for index, item in enumerate(value):
            _walk(item, f"{spath}[]", join(ipath, index), ctx, unmove)
        return
    if not isinstance(value, dict):
        return
    is_map = spath in target.maps
    for key, child in value.items():
        if is_map:
            _walk(child, f"{spath}{{}}", join(ipath, key, map_key=True), ctx, unmove)
            continue
        cpath = f"{spath}.{key}" if spath else key
        cinst = join(ipath, key)
        if target.has(cpath):
            _walk(child, cpath, cinst, ctx, unmove)
        elif ctx.source.has(unmove(cpath)):
            ctx.refuse(cinst, f"{ctx.target.name} has no such field")


def build(data: dict[str, object], ctx: Context, model: type[M]) -> M:
    """Validate converted JSON into the target model; a rejected value names its path."""
    data["apiVersion"] = ctx.target.api_version
    data["kind"] = ctx.target.kind
    return made(lambda: model.model_validate(data), "", ctx)


def carry(part: P, unknown: Mapping[str, JsonValue]) -> P:
    """`part` with the `unknown` fields (neither version declares them) set on it, as the
    models keep unknown fields: a conversion carries them wherever their parent exists."""
    for name, value in unknown.items():
        setattr(part, name, value)
    return part


def made(make: Callable[[], P], where: str, ctx: Context) -> P:
    """A part of the target built by `make`; a value it rejects is refused by its path
    (below `where`)."""
    try:
        return make()
    except ValidationError as exc:
        first = exc.errors()[0]
        ctx.refuse(render((where, *first["loc"])), f"{first['msg']} (value {first['input']!r})")


def unhandled(part: KubeModel, handled: Collection[str]) -> dict[str, JsonValue]:
    """The fields `part` sets (by JSON name, unknown ones included) other than `handled`:
    what a conversion has not carried yet, to be refused or carried as unknown."""
    return {key: value for key, value in part.to_dict().items() if key not in handled}
