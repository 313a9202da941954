"""Conversions between two versions of one kind that share most of their shape.

Kueue's v1beta1 and v1beta2 and KubeRay's v1alpha1 and v1 differ in a handful of renamed or
moved fields and a few values; everything else is carried as is. A :class:`Reshape` states
those differences: ``moves`` relocate whole fields (``spec.cohort`` -> ``spec.cohortName``),
``hooks`` read the source model and set the fields whose values change on the target model
(refusing what has no counterpart), ``carried`` names the source fields the hooks carry
themselves, and the shared checks refuse any other field the target lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from flarekit._json import JsonValue
from flarekit.compat._engine import Context, build, check_carried, load_model
from flarekit_models import KubeModel, KubeResource

__all__ = ["Check", "Hook", "Reshape"]

S = TypeVar("S", bound=KubeResource)
T = TypeVar("T", bound=KubeResource)

#: Reads the source object and sets fields of the converted one (or refuses by path).
Hook = Callable[[S, T, Context], None]
#: Reads the source object before anything is converted, refusing what cannot be.
Check = Callable[[S, Context], None]


def _identity(model: type[KubeResource]) -> tuple[str, str]:
    info = model.resource_info()
    return info.api_version, info.kind


@dataclass(frozen=True)
class Reshape(Generic[S, T]):
    """One direction of one kind, from the model class ``source_model`` to ``target_model``.

    ``checks`` read the source first and refuse what cannot convert. ``moves`` are (source
    path, target path) pairs of dotted object fields; a move whose target is already set is
    refused rather than overwritten. ``carried`` are source schema paths (``[]`` for each
    list item) that the hooks carry: they are left out of the shared copy, and the hooks,
    run on the validated target, set what they become.
    """

    source_model: type[S]
    target_model: type[T]
    moves: tuple[tuple[str, str], ...] = ()
    carried: tuple[str, ...] = ()
    checks: tuple[Check[S], ...] = ()
    hooks: tuple[Hook[S, T], ...] = ()

    @property
    def source(self) -> tuple[str, str]:
        """(apiVersion, kind) converted from."""
        return _identity(self.source_model)

    @property
    def target(self) -> tuple[str, str]:
        """(apiVersion, kind) converted to."""
        return _identity(self.target_model)

    def __call__(self, obj: KubeModel | Mapping[str, JsonValue]) -> T:
        ctx = Context.of(self.source, self.target)
        source = load_model(obj, self.source_model, ctx)
        for check in self.checks:
            check(source, ctx)
        data = source.to_dict()
        for path in self.carried:
            _remove(data, path.replace("[]", "").split("."))
        for src, dst in self.moves:
            _move(data, src, dst, ctx)
        check_carried(data, ctx, self._unmove)
        target = build(data, ctx, self.target_model)
        for hook in self.hooks:
            hook(source, target, ctx)
        return target

    def _unmove(self, path: str) -> str:
        for src, dst in self.moves:
            if path == dst or path.startswith((f"{dst}.", f"{dst}[", f"{dst}{{")):
                return src + path[len(dst) :]
        return path


def _remove(node: object, keys: list[str]) -> None:
    """Delete the field at `keys` below `node`, in every item of the lists on the way."""
    if isinstance(node, list):
        for item in node:
            _remove(item, keys)
        return
    if not isinstance(node, dict) or not keys:
        return
    first, *rest = keys
    if rest:
        _remove(node.get(first), rest)
    else:
        node.pop(first, None)


def _move(data: dict[str, object], src: str, dst: str, ctx: Context) -> None:
    *src_parents, src_key = src.split(".")
    parent: object = data
    for part in src_parents:
        parent = parent.get(part) if isinstance(parent, dict) else None
    if not isinstance(parent, dict) or src_key not in parent:
        return
    value = parent.pop(src_key)
    if not parent and src_parents:
        _prune_empty(data, src_parents)
    *dst_parents, dst_key = dst.split(".")
    node = data
    for part in dst_parents:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            ctx.refuse(dst, f"{part} is not an object")
        node = child
    if dst_key in node:
        ctx.refuse(src, f"{dst} is set as well; {ctx.target.name} has only {dst}")
    node[dst_key] = value


def _prune_empty(data: dict[str, object], parents: list[str]) -> None:
    """Drop the object a move emptied (``spec.clusterSource`` once its ``kubeConfig`` left).

    Top-level sections (``spec``, ``status``) are kept: the target has them too.
    """
    if len(parents) < 2:
        return
    node: object = data
    for part in parents[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict) and not node.get(parents[-1]):
        del node[parents[-1]]
