"""Conversions between two versions of one kind that share most of their shape.

Kueue's v1beta1 and v1beta2 and KubeRay's v1alpha1 and v1 differ in a handful of renamed or
moved fields and a few values; everything else is carried as is. A :class:`Reshape` states
those differences: ``hooks`` rewrite values in place (and refuse what has no counterpart),
``moves`` relocate whole fields (``spec.cohort`` -> ``spec.cohortName``), and the shared
checks refuse any other field the target lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flarekit.compat._engine import Context, build, check_carried, load
from flarekit_models._base import KubeModel, KubeResource

__all__ = ["Hook", "Reshape"]

Hook = Callable[[dict[str, Any], Context], None]


@dataclass(frozen=True)
class Reshape:
    """One direction of one kind: ``source`` and ``target`` are (apiVersion, kind) pairs.

    ``moves`` are (source path, target path) pairs of dotted object fields, applied after
    the hooks; a move whose target is already set is refused rather than overwritten.
    """

    source: tuple[str, str]
    target: tuple[str, str]
    moves: tuple[tuple[str, str], ...] = ()
    hooks: tuple[Hook, ...] = ()

    def __call__(self, obj: KubeModel | Mapping[str, Any]) -> KubeResource:
        ctx = Context.of(self.source, self.target)
        data = load(obj, ctx)
        for hook in self.hooks:
            hook(data, ctx)
        for src, dst in self.moves:
            _move(data, src, dst, ctx)
        check_carried(data, ctx, self._unmove)
        return build(data, ctx)

    def _unmove(self, path: str) -> str:
        for src, dst in self.moves:
            if path == dst or path.startswith((f"{dst}.", f"{dst}[", f"{dst}{{")):
                return src + path[len(dst) :]
        return path


def _move(data: dict[str, Any], src: str, dst: str, ctx: Context) -> None:
    *src_parents, src_key = src.split(".")
    parent: Any = data
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
        node = node.setdefault(part, {})
    if dst_key in node:
        ctx.refuse(src, f"{dst} is set as well; {ctx.target.name} has only {dst}")
    node[dst_key] = value


def _prune_empty(data: dict[str, Any], parents: list[str]) -> None:
    """Drop the object a move emptied (``spec.clusterSource`` once its ``kubeConfig`` left).

    Top-level sections (``spec``, ``status``) are kept: the target has them too.
    """
    if len(parents) < 2:
        return
    node: Any = data
    for part in parents[:-1]:
        node = node[part]
    if not node[parents[-1]]:
        del node[parents[-1]]
