"""The machinery every conversion shares: load the source, check what is carried, build the target.

A conversion works on the object's JSON (``to_dict()`` of the source model, unknown fields
included). Pair-specific code rewrites what differs between the two versions; then
:func:`check_carried` walks the result against the target's declared fields, so that a field
the source version declares but the target does not is refused by name, while a field
neither declares (kept by the models as an extra, e.g. written by a newer server) travels on
unchanged wherever its parent exists in the target. :func:`build` validates the result into
the target model, reporting a value the target rejects as a :class:`ConversionError` with its
path.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from pydantic import ValidationError

from flarekit.compat._errors import ConversionError
from flarekit.compat._paths import Schema, join, render, schema_of
from flarekit_models._base import KubeModel, KubeResource
from flarekit_models._registry import resource_model

__all__ = ["Context", "build", "check_carried", "get", "load"]


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


def load(obj: KubeModel | Mapping[str, Any], ctx: Context) -> dict[str, Any]:
    """The source object's JSON, validated by the source model (a deep copy)."""
    api_version, kind = ctx.source.api_version, ctx.source.kind
    data = obj.to_dict() if isinstance(obj, KubeModel) else dict(obj)
    got = (data.get("apiVersion", api_version), data.get("kind", kind))
    if got != (api_version, kind):
        raise ValueError(
            f"expected an object of apiVersion={api_version!r}, kind={kind!r}; "
            f"got apiVersion={got[0]!r}, kind={got[1]!r}"
        )
    model = resource_model(api_version, kind)
    loaded = data if isinstance(obj, model) else model.model_validate(data).to_dict()
    return copy.deepcopy(loaded)


Unmove = Callable[[str], str]


def _identity(path: str) -> str:
    return path


def check_carried(data: Mapping[str, Any], ctx: Context, unmove: Unmove = _identity) -> None:
    """Refuse every field of ``data`` the target does not declare but the source does.

    ``data`` is already in the target's shape; ``unmove`` maps a target schema path back to
    the source schema path it came from (for fields a conversion moved). Fields neither
    version declares are unknown extras and are carried; their insides are not inspected.
    """
    _walk(data, "", "", ctx, unmove)


def _walk(value: Any, spath: str, ipath: str, ctx: Context, unmove: Unmove) -> None:
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


def build(data: dict[str, Any], ctx: Context) -> KubeResource:
    """Validate converted JSON into the target model; a rejected value names its path."""
    data["apiVersion"] = ctx.target.api_version
    data["kind"] = ctx.target.kind
    model = resource_model(ctx.target.api_version, ctx.target.kind)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        ctx.refuse(render(first["loc"]), f"{first['msg']} (value {first.get('input')!r})")


def get(data: Mapping[str, Any], dotted: str) -> Any:
    """The value at a dotted path of plain object fields, or None."""
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node
