"""A resource request as the handlers see it, its options, and how objects are presented.

The HTTP layer resolves the URL to a resource type, version, namespace, name and subresource;
everything after that (options parsing, version presentation, selectors) is shared by the read
and write handlers and lives here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flarekit_testing.apiserver import _errors
from flarekit_testing.apiserver._json import JsonRefused, copy_json, loads
from flarekit_testing.apiserver._protobuf import ProtobufError, decode_protobuf, is_protobuf
from flarekit_testing.apiserver._resources import ResourceType, Version, strategy_of
from flarekit_testing.apiserver._selectors import parse_field_selector, parse_label_selector
from flarekit_testing.apiserver._store import Key, Store

JSON = dict[str, Any]

FIELD_VALIDATION = ("Ignore", "Warn", "Strict")
JSON_TYPES = ("application/json", "application/yaml")


@dataclass
class Request:
    """A request for one resource type in one version, already routed and authorized."""

    method: str
    rt: ResourceType
    version: Version
    namespace: str
    name: str
    subresource: str
    query: dict[str, list[str]] = field(default_factory=dict)
    body: bytes = b""
    content_type: str = ""
    user_agent: str = ""
    #: who sends it (what admission webhooks see); direct access acts as the admin
    user: str = ""

    @property
    def api_version(self) -> str:
        return self.rt.api_version(self.version.name)

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else None

    def flag(self, name: str) -> bool:
        return (self.param(name) or "").lower() in ("1", "true", "yes")

    def key(self, name: str | None = None) -> Key:
        group, plural = self.rt.bucket
        return (group, plural, self.namespace, self.name if name is None else name)

    @property
    def manager(self) -> str:
        """The field manager: `fieldManager`, else the User-Agent's product (before '/')."""
        explicit = self.param("fieldManager")
        if explicit:
            return explicit
        return self.user_agent.split("/", 1)[0] or "unknown"


@dataclass
class Response:
    code: int
    body: JSON
    warnings: list[str] = field(default_factory=list)
    content_type: str = "application/json"
    #: The request header the answer depends on (``Vary``), if any.
    vary: str | None = None


@dataclass(frozen=True)
class WriteOptions:
    dry_run: bool
    field_validation: str
    manager: str
    force: bool


def options_error(kind: str, causes: list[_errors.Cause]) -> _errors.ApiError:
    return _errors.invalid(kind, "meta.k8s.io", "", causes)


def write_options(req: Request, kind: str) -> WriteOptions:
    """Validate dryRun / fieldValidation / fieldManager / force as `<kind>.meta.k8s.io`."""
    causes = []
    for value in req.query.get("dryRun", []):
        if value != "All":
            causes.append(
                _errors.Cause(
                    "FieldValueNotSupported",
                    f'Unsupported value: "{value}": supported values: "All"',
                    "dryRun",
                )
            )
    validation = req.param("fieldValidation") or "Warn"
    if validation not in FIELD_VALIDATION:
        supported = ", ".join(f'"{v}"' for v in FIELD_VALIDATION)
        causes.append(
            _errors.Cause(
                "FieldValueNotSupported",
                f'Unsupported value: "{validation}": supported values: {supported}',
                "fieldValidation",
            )
        )
    manager = req.param("fieldManager") or ""
    if len(manager) > 128:
        causes.append(
            _errors.Cause(
                "FieldValueTooLong", "Too long: may not be more than 128 bytes", "fieldManager"
            )
        )
    if causes:
        raise options_error(kind, causes)
    return WriteOptions(
        dry_run="All" in req.query.get("dryRun", []),
        field_validation=validation,
        manager=req.manager,
        force=req.flag("force"),
    )


def decode_body(req: Request) -> JSON:
    """The request body as a JSON object; 400 BadRequest otherwise.

    Built-in kinds are decoded as kube-apiserver decodes typed objects: protobuf bodies are
    read, and a missing apiVersion or kind is taken from the URL. Custom resources are
    decoded as unstructured JSON, which needs both.
    """
    if is_protobuf(req.content_type):
        if not req.rt.builtin:
            raise _errors.unsupported_media_type(req.content_type, JSON_TYPES)
        try:
            doc = decode_protobuf(req.body, req.rt.kind)
        except ProtobufError as exc:
            raise _errors.bad_request(str(exc)) from None
    else:
        try:
            doc = loads(req.body or b"null")
        except JsonRefused as exc:
            kind = req.rt.kind
            if exc.unmarshal:
                message = f'{kind} in version "{req.version.name}" cannot be handled as a {kind}'
                raise _errors.bad_request(f"{message}: {exc}") from None
            raise _errors.bad_request(
                f"the object provided is unrecognized (must be of type {kind}): "
                f"couldn't get version/kind; json parse error: {exc}"
            ) from None
        except ValueError as exc:
            raise _errors.bad_request(
                f"couldn't get version/kind; json parse error: {exc}"
            ) from None
    if not isinstance(doc, dict):
        raise _errors.bad_request(
            f"the object provided is unrecognized (must be of type {req.rt.kind})"
        )
    if req.rt.builtin:
        doc.setdefault("apiVersion", req.api_version)
        doc.setdefault("kind", req.rt.kind)
        if not doc["apiVersion"]:
            doc["apiVersion"] = req.api_version
        if not doc["kind"]:
            doc["kind"] = req.rt.kind
        problem = strategy_of(req.rt).decode(doc)
        if problem:
            kind, version = req.rt.kind, req.version.name
            raise _errors.bad_request(
                f'{kind} in version "{version}" cannot be handled as a {kind}: {problem}'
            )
    return doc


def check_type(req: Request, doc: JSON) -> None:
    """The body's apiVersion and kind must name what the URL names."""
    kind, api_version = doc.get("kind"), doc.get("apiVersion")
    if not kind:
        raise _errors.bad_request(f"Object 'Kind' is missing in '{json.dumps(doc)}'")
    if api_version != req.api_version:
        raise _errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API "
            f"version ({req.api_version})"
        )
    if kind != req.rt.kind and not req.rt.builtin:
        # a custom resource is read whatever its kind, then validated: 422, as the
        # apiextensions validator answers
        name = str((doc.get("metadata") or {}).get("name") or req.name)
        why = f'Invalid value: "{kind}": must be {req.rt.kind}'
        raise _errors.invalid(
            req.rt.kind, req.rt.group, name, [_errors.Cause("FieldValueInvalid", why, "kind")]
        )
    if kind != req.rt.kind:
        raise _errors.bad_request(
            f"the kind in the data ({kind}) does not match the expected kind ({req.rt.kind})"
        )


def present(obj: JSON, rt: ResourceType, version: str) -> JSON:
    """A stored object as seen through `version` (a deep copy)."""
    return strategy_of(rt).from_stored(copy_json(obj), rt.api_version(version))


def to_storage(obj: JSON, rt: ResourceType) -> JSON:
    out = strategy_of(rt).to_stored(obj)
    if rt.stored_as is None:
        out["apiVersion"] = rt.api_version(rt.storage_version)
    return out


def matcher(req: Request) -> Callable[[JSON], bool]:
    """Label and field selector of the request as one predicate; 400 on bad syntax."""
    try:
        labels = parse_label_selector(req.param("labelSelector") or "")
    except ValueError as exc:
        raise _errors.bad_request(str(exc)) from None
    try:
        fields = parse_field_selector(
            req.param("fieldSelector") or "", strategy_of(req.rt).selectable()
        )
    except ValueError as exc:
        raise _errors.bad_request(str(exc)) from None

    def matches(obj: JSON) -> bool:
        return labels.matches((obj.get("metadata") or {}).get("labels") or {}) and fields.matches(
            obj
        )

    return matches


def deprecation_warnings(req: Request) -> list[str]:
    message = req.rt.deprecation_message(req.version)
    return [message] if message else []


def require_namespace(store: Store, req: Request, name: str, creating: bool) -> None:
    """404 when the request's namespace does not exist; 403 creating into a terminating one."""
    ns = store.get(("", "namespaces", "", req.namespace))
    if ns is None:
        raise _errors.not_found("namespaces", "", req.namespace)
    if creating and (ns.get("metadata") or {}).get("deletionTimestamp"):
        raise _errors.forbidden(
            req.rt.plural,
            req.rt.group,
            name,
            f"unable to create new content in namespace {req.namespace} because it is being "
            "terminated",
            [
                _errors.Cause(
                    "NamespaceTerminating",
                    f"namespace {req.namespace} is being terminated",
                    "metadata.namespace",
                )
            ],
        )
