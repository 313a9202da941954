"""The read-only ``apiextensions.k8s.io/v1`` CustomResourceDefinition API.

Why: clients that want to know *which release* of an operator a cluster runs read its CRDs
(the schema says more than discovery does), and many users may not (``get`` on
``customresourcedefinitions`` is a cluster-scoped permission). FakeCluster therefore serves
the CRDs it was started with, as a real server presents them (metadata filled in, a status
with accepted names, stored versions and the Established condition), behind the same
authorization as every other resource, so both the reading and the denial can be tested.
Writes are refused: the set of served resources is fixed when the FakeCluster starts.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from flarekit_testing.apiserver import _errors
from flarekit_testing.apiserver._auth import Attributes, Policy
from flarekit_testing.apiserver._discovery import storage_version_hash
from flarekit_testing.apiserver._meta import timestamp
from flarekit_testing.apiserver._request import Response
from flarekit_testing.apiserver._strategy import Column, Strategy
from flarekit_testing.apiserver._tables import NAME, table

__all__ = [
    "GROUP",
    "PLURAL",
    "as_table",
    "discovery",
    "group_entry",
    "is_crd_path",
    "present_crds",
    "serve",
]

JSON = dict[str, Any]

GROUP = "apiextensions.k8s.io"
VERSION = "v1"
PLURAL = "customresourcedefinitions"
KIND = "CustomResourceDefinition"
_PREFIX = f"/apis/{GROUP}/{VERSION}/{PLURAL}"
_NAMESPACE = uuid.UUID("6f1c9b1e-3b7e-4f51-9a8e-6e2f7c0d4a11")


def _condition(kind: str, reason: str, message: str, created: str) -> JSON:
    return {
        "type": kind,
        "status": "True",
        "lastTransitionTime": created,
        "reason": reason,
        "message": message,
    }


def _present(crd: Mapping[str, Any], created: str) -> JSON:
    """One CRD as the apiserver returns it: server-set metadata and an Established status.

    Only what is added is new: the spec is the given CRD's own (served read-only, never
    changed), so making a FakeCluster does not copy megabytes of schemas."""
    out: JSON = dict(crd)
    meta = out["metadata"] = dict(out.get("metadata") or {})
    name = str(meta.get("name", ""))
    meta.setdefault("uid", str(uuid.uuid5(_NAMESPACE, name)))
    meta.setdefault("resourceVersion", "1")
    meta.setdefault("generation", 1)
    meta.setdefault("creationTimestamp", created)
    spec = out.get("spec") or {}
    names = dict(spec.get("names") or {})
    names.setdefault("singular", str(names.get("kind", "")).lower())
    names.setdefault("listKind", f"{names.get('kind', '')}List")
    storage = [v.get("name") for v in spec.get("versions") or [] if v.get("storage")]
    out["status"] = {
        "acceptedNames": names,
        "storedVersions": storage,
        "conditions": [
            _condition("NamesAccepted", "NoConflicts", "no conflicts found", created),
            _condition(
                "Established",
                "InitialNamesAccepted",
                "the initial names have been accepted",
                created,
            ),
        ],
    }
    return out


#: When the served CRDs were "installed": when this process first served them. One time for
#: every FakeCluster of a process, so a CRD reads the same (byte for byte) from each of them.
_INSTALLED = timestamp()


def present_crds(crds: Iterable[Mapping[str, Any]]) -> dict[str, JSON]:
    """The CRDs to serve, by name, presented once when the FakeCluster is made."""
    created = _INSTALLED
    return {str((c.get("metadata") or {}).get("name", "")): _present(c, created) for c in crds}


def is_crd_path(path: str) -> bool:
    return path == _PREFIX or path.startswith(_PREFIX + "/")


def group_entry() -> JSON:
    """The apiextensions group as it appears in ``/apis``."""
    version = {"groupVersion": f"{GROUP}/{VERSION}", "version": VERSION}
    return {"name": GROUP, "versions": [version], "preferredVersion": version}


def aggregated_group() -> JSON:
    """The apiextensions group as aggregated discovery lists it."""
    kind = {"group": "", "version": "", "kind": KIND}
    resource = {
        "resource": PLURAL,
        "responseKind": kind,
        "scope": "Cluster",
        "singularResource": "customresourcedefinition",
        "verbs": ["get", "list"],
        "shortNames": ["crd", "crds"],
        "categories": ["api-extensions"],
    }
    version = {"version": VERSION, "resources": [resource], "freshness": "Current"}
    return {"metadata": {"name": GROUP}, "versions": [version]}


def discovery(path: str) -> JSON | None:
    """``/apis/apiextensions.k8s.io`` and ``/apis/apiextensions.k8s.io/v1``; None otherwise."""
    if path == f"/apis/{GROUP}":
        return {"kind": "APIGroup", "apiVersion": "v1", **group_entry()}
    if path == f"/apis/{GROUP}/{VERSION}":
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{GROUP}/{VERSION}",
            "resources": [
                {
                    "name": PLURAL,
                    "singularName": "customresourcedefinition",
                    "namespaced": False,
                    "kind": KIND,
                    "verbs": ["get", "list"],
                    "shortNames": ["crd", "crds"],
                    "categories": ["api-extensions"],
                    "storageVersionHash": storage_version_hash(GROUP, VERSION, KIND),
                }
            ],
        }
    return None


def _name_selector(query: Mapping[str, list[str]]) -> str | None:
    """``metadata.name=<x>`` from a fieldSelector (the only field CRDs are selected by)."""
    raw = (query.get("fieldSelector") or [""])[-1]
    if not raw:
        return None
    key, sep, value = raw.partition("=")
    if key.strip() != "metadata.name" or not sep or "," in value:
        raise _errors.bad_request(
            f'"{raw}" is not a known field selector: only "metadata.name" is supported'
        )
    return value.lstrip("=").strip()


class _Printer(Strategy):
    """How kube-apiserver prints CRDs (`kubectl get crd`): NAME and CREATED AT, the creation
    time itself rather than an age."""

    def columns(self) -> list[Column]:
        created = Column("Created At", type="date", description=CREATED_AT)
        return [NAME, created]

    def cells(self, obj: Mapping[str, Any]) -> list[Any]:
        meta = obj.get("metadata") or {}
        return [meta.get("name", ""), meta.get("creationTimestamp")]


CREATED_AT = "When the object was created, as the server recorded it (RFC 3339, UTC)."
PRINTER = _Printer()


def as_table(body: Mapping[str, Any], query: Mapping[str, list[str]]) -> JSON:
    """A CRD or CRD list answer as the Table `kubectl get crd` asks for."""
    include = (query.get("includeObject") or ["Metadata"])[-1]
    rv = (body.get("metadata") or {}).get("resourceVersion")
    meta = {"resourceVersion": rv} if rv else {}
    items = body["items"] if isinstance(body.get("items"), list) else [body]
    return table(PRINTER, items, meta, include)


def serve(
    crds: Mapping[str, JSON],
    policy: Policy,
    user: str,
    method: str,
    path: str,
    query: Mapping[str, list[str]],
) -> Response:
    """Answer a request under ``/apis/apiextensions.k8s.io/v1/customresourcedefinitions``."""
    rest = path[len(_PREFIX) :].strip("/")
    if "/" in rest:
        raise _errors.generic_not_found()
    watching = (query.get("watch") or [""])[-1].lower() in ("1", "true")
    if method != "GET" or watching:
        raise _errors.method_not_allowed()
    verb = "get" if rest else "list"
    policy.authorize(Attributes(user, verb, GROUP, PLURAL, "", "", rest))
    if rest:
        found = crds.get(rest)
        if found is None:
            raise _errors.not_found(PLURAL, GROUP, rest)
        return Response(200, found)  # sent as is: responses are only serialised
    wanted = _name_selector(query)
    items = [c for n, c in sorted(crds.items()) if wanted in (None, n)]
    return Response(
        200,
        {
            "kind": f"{KIND}List",
            "apiVersion": f"{GROUP}/{VERSION}",
            "metadata": {"resourceVersion": "1"},
            "items": items,
        },
    )
