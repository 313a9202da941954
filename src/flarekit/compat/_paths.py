"""Field paths: rendering them for messages and knowing which ones a kind declares.

Two spellings are used. *Instance paths* point at one value and are what errors show
(``spec.resourceGroups[0].flavors[1].name``, map keys in brackets:
``spec.nodeSelector[kubernetes.io/os]``). *Schema paths* name a field of a kind the way the
generated field table does (``spec.resourceGroups[].flavors[].name``, ``{}`` for a map value),
and say whether a version declares a field at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from flarekit_models import field_releases

__all__ = ["Schema", "join", "render", "schema_of"]


def join(parent: str, key: str | int, *, map_key: bool = False) -> str:
    """The instance path of ``key`` under ``parent`` (an index or map key in brackets)."""
    if isinstance(key, int) or map_key:
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key


def render(loc: Sequence[str | int]) -> str:
    """An instance path from a pydantic error location (``("spec", "items", 0)``)."""
    path = ""
    for part in loc:
        path = join(path, part)
    return path


@dataclass(frozen=True)
class Schema:
    """The schema paths one apiVersion/kind declares in any pinned release.

    ``fields`` are all declared paths; ``parents`` those with declared children, so that a
    path in ``fields`` but not in ``parents`` is a leaf or an embedded Kubernetes type (a pod
    template, ``metadata``) whose inside the table does not list; ``maps`` the paths whose
    keys are map keys (``path{}`` declares their values).
    """

    api_version: str
    kind: str
    fields: frozenset[str]
    parents: frozenset[str]
    maps: frozenset[str]

    @property
    def name(self) -> str:
        return f"{self.api_version} {self.kind}"

    def has(self, path: str) -> bool:
        return path in self.fields

    def is_opaque(self, path: str) -> bool:
        """True for a declared path whose children the table does not list."""
        return path in self.fields and path not in self.parents


@cache
def schema_of(api_version: str, kind: str) -> Schema:
    """The :class:`Schema` of a kind (empty if the generated table does not know it)."""
    fields = frozenset(field_releases(api_version, kind))
    parents: set[str] = set()
    maps: set[str] = set()
    for path in fields:
        for cut in range(len(path)):
            if path[cut] in ".[{" and path[:cut] in fields:
                parents.add(path[:cut])
            if path.startswith("{}", cut):
                maps.add(path[:cut])
    return Schema(api_version, kind, fields, frozenset(parents), frozenset(maps))
