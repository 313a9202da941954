"""What the fake serves: resource types read from CustomResourceDefinition objects.

A CRD is a large, loosely typed document; the server needs a handful of facts from it (names,
scope, served versions, the storage version, schemas, subresources). Reading them once, with
errors that name the offending field, keeps the request handlers free of dictionary digging.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from flarekit_testing.apiserver._strategy import CUSTOM, Strategy

JSON = dict[str, Any]

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(name: str) -> tuple[int, int, int, str]:
    """Sort key ordering versions like Kubernetes does: v2 > v1 > v1beta2 > v1alpha1 > other.

    Smaller keys sort first, so `sorted(names, key=version_priority)` lists the preferred
    version first (apimachinery's CompareKubeAwareVersionStrings).
    """
    match = _KUBE_VERSION.match(name)
    if not match:
        return (3, 0, 0, name)
    major = int(match.group(1))
    stage = {"": 0, "beta": 1, "alpha": 2}[match.group(2) or ""]
    minor = int(match.group(3) or 0)
    return (stage, -major, -minor, "")


@dataclass(frozen=True)
class ScaleSpec:
    """Where the `/scale` subresource reads and writes replicas (JSON paths like `.spec.replicas`)."""

    spec_replicas_path: str
    status_replicas_path: str
    label_selector_path: str | None


@dataclass(frozen=True)
class Version:
    """One version of a resource as declared in the CRD."""

    name: str
    served: bool
    storage: bool
    schema: JSON | None
    deprecated: bool = False
    deprecation_warning: str | None = None
    status_subresource: bool = False
    scale: ScaleSpec | None = None


@dataclass(frozen=True)
class ResourceType:
    """A served resource: the facts discovery, routing and storage need."""

    group: str
    plural: str
    singular: str
    kind: str
    list_kind: str
    namespaced: bool
    versions: tuple[Version, ...]
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    #: the kind's strategy; None for custom resources (see `_strategy.strategy_of`)
    strategy: Strategy | None = field(default=None, compare=False)
    #: (group, plural) whose storage this resource shares (events.k8s.io events live with
    #: core events); None: its own
    stored_as: tuple[str, str] | None = None
    #: verbs served; None: every verb of a stored resource
    verbs: tuple[str, ...] | None = None
    #: printer columns of a custom resource version, by version name
    printer_columns: tuple[tuple[str, tuple[JSON, ...]], ...] = field(default=(), compare=False)

    @property
    def bucket(self) -> tuple[str, str]:
        """Where the objects are kept in the store: (group, plural)."""
        return self.stored_as or (self.group, self.plural)

    @property
    def builtin(self) -> bool:
        return self.strategy is not None and self.strategy.typed

    @property
    def storage_version(self) -> str:
        return next(v.name for v in self.versions if v.storage)

    @property
    def served_versions(self) -> list[Version]:
        return [v for v in self.versions if v.served]

    def version(self, name: str) -> Version | None:
        return next((v for v in self.versions if v.name == name and v.served), None)

    def api_version(self, version: str) -> str:
        return f"{self.group}/{version}" if self.group else version

    def deprecation_message(self, version: Version) -> str | None:
        """The `Warning` header text for a deprecated version (apiextensions' default wording)."""
        if not version.deprecated:
            return None
        if version.deprecation_warning:
            return version.deprecation_warning
        message = f"{self.group}/{version.name} {self.kind} is deprecated"
        newer = [
            v.name
            for v in self.versions
            if v.served
            and not v.deprecated
            and version_priority(v.name) < version_priority(version.name)
        ]
        if newer:
            best = sorted(newer, key=version_priority)[0]
            message += f"; use {self.group}/{best} {self.kind}"
        return message


class CRDError(ValueError):
    """A CRD given to FakeCluster is malformed; the message names the field path."""


def _get(doc: Mapping[str, Any], path: str, where: str, kind: type = str) -> Any:
    node: Any = doc
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise CRDError(f"{where}: missing required field {path!r}")
        node = node[part]
    if not isinstance(node, kind):
        raise CRDError(f"{where}: field {path!r} must be a {kind.__name__}, got {node!r}")
    return node


def resource_from_crd(crd: Mapping[str, Any]) -> ResourceType:
    """Read a `apiextensions.k8s.io/v1` CustomResourceDefinition into a ResourceType."""
    name = crd.get("metadata", {}).get("name", "<unnamed>") if isinstance(crd, Mapping) else "?"
    where = f"CustomResourceDefinition {name!r}"
    if not isinstance(crd, Mapping):
        raise CRDError(f"a CRD must be a mapping, got {type(crd).__name__}")
    if crd.get("apiVersion") != "apiextensions.k8s.io/v1":
        raise CRDError(
            f"{where}: apiVersion must be 'apiextensions.k8s.io/v1', got {crd.get('apiVersion')!r}"
        )
    group = _get(crd, "spec.group", where)
    names = _get(crd, "spec.names", where, Mapping)
    plural = _get(names, "plural", f"{where} spec.names")
    kind = _get(names, "kind", f"{where} spec.names")
    scope = _get(crd, "spec.scope", where)
    if scope not in ("Namespaced", "Cluster"):
        raise CRDError(f"{where}: spec.scope must be one of 'Namespaced', 'Cluster', got {scope!r}")
    raw_versions = _get(crd, "spec.versions", where, list)
    versions = tuple(_version(v, f"{where} spec.versions[{i}]") for i, v in enumerate(raw_versions))
    storage = [v.name for v in versions if v.storage]
    if len(storage) != 1:
        raise CRDError(
            f"{where}: spec.versions must have exactly one storage version, found {storage}"
        )
    return ResourceType(
        group=group,
        plural=plural,
        singular=names.get("singular") or kind.lower(),
        kind=kind,
        list_kind=names.get("listKind") or f"{kind}List",
        namespaced=scope == "Namespaced",
        versions=versions,
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        printer_columns=tuple(
            (str(v.get("name")), tuple(v.get("additionalPrinterColumns") or ()))
            for v in raw_versions
            if isinstance(v, Mapping)
        ),
    )


def _version(doc: Any, where: str) -> Version:
    if not isinstance(doc, Mapping):
        raise CRDError(f"{where}: must be a mapping")
    subresources = doc.get("subresources") or {}
    scale = subresources.get("scale")
    schema = (doc.get("schema") or {}).get("openAPIV3Schema")
    return Version(
        name=_get(doc, "name", where),
        served=bool(_get(doc, "served", where, bool)),
        storage=bool(_get(doc, "storage", where, bool)),
        schema=schema,
        deprecated=bool(doc.get("deprecated", False)),
        deprecation_warning=doc.get("deprecationWarning"),
        status_subresource="status" in subresources,
        scale=(
            ScaleSpec(
                spec_replicas_path=scale["specReplicasPath"],
                status_replicas_path=scale["statusReplicasPath"],
                label_selector_path=scale.get("labelSelectorPath"),
            )
            if scale
            else None
        ),
    )


class Registry:
    """All served resource types, looked up by group and plural (or kind)."""

    def __init__(
        self,
        crds: Iterable[Mapping[str, Any]],
        builtins: Iterable[ResourceType] = (),
        adapt: Callable[[ResourceType], ResourceType] = lambda rt: rt,
    ) -> None:
        """`adapt` may give a custom resource type what its versions need (a conversion)."""
        self._types: dict[tuple[str, str], ResourceType] = {
            (rt.group, rt.plural): rt for rt in builtins
        }
        for crd in crds:
            rt = adapt(resource_from_crd(crd))
            key = (rt.group, rt.plural)
            if key in self._types:
                raise CRDError(f"two CRDs define {rt.plural}.{rt.group}")
            self._types[key] = rt

    def __iter__(self) -> Any:
        return iter(self._types.values())

    def lookup(self, group: str, plural: str) -> ResourceType | None:
        return self._types.get((group, plural))

    def by_kind(self, group: str, kind: str) -> ResourceType | None:
        return next((t for t in self._types.values() if t.group == group and t.kind == kind), None)

    def by_name(self, name: str) -> ResourceType | None:
        """Find a type by `plural`, `plural.group`, kind or short name (for test helpers)."""
        for rt in self._types.values():
            full = f"{rt.plural}.{rt.group}" if rt.group else rt.plural
            if name in (rt.plural, full, rt.kind, rt.singular, *rt.short_names):
                return rt
        return None

    def groups(self) -> dict[str, list[str]]:
        """Served versions per API group, preferred version first (discovery order)."""
        out: dict[str, set[str]] = {}
        for rt in self._types.values():
            if rt.group:
                out.setdefault(rt.group, set()).update(v.name for v in rt.served_versions)
        return {g: sorted(vs, key=version_priority) for g, vs in sorted(out.items()) if vs}


def strategy_of(rt: ResourceType) -> Strategy:
    """The kind's strategy: its own for built-in kinds, the custom resources' otherwise."""
    return rt.strategy if rt.strategy is not None else CUSTOM
