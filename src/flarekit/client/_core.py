"""What every `Client` call goes through: the connection, the client's facts about its
server, and the one request helper that sends a call and checks a write's answer.

`ClientCore` is the part of `Client` that holds state and sends; `Client` (`_client`) adds the
verbs (get, list, watch, create, replace, patch, apply, delete), each written in terms of it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Literal, Self, TypeVar

from flarekit._objects import metadata_of
from flarekit.client._codec import dump
from flarekit.client._components import check_appwrapper, is_appwrapper
from flarekit.client._config import Credentials, default_credentials
from flarekit.client._dropped import is_unknown_field, report_pruned
from flarekit.client._errors import NotFound, Operation
from flarekit.client._facts import ServerFacts
from flarekit.client._json_patch import PatchOperation
from flarekit.client._limits import ReadLimits
from flarekit.client._pruning import Scope, built_in_group, pruned_by_json_patch, pruned_fields
from flarekit.client._resource import Target, operation_for_path
from flarekit.client._retry import RetryPolicy
from flarekit.client._transport import Query, Response, Transport
from flarekit_models import KubeResource

__all__ = ["PATCH_CONTENT", "ClientCore", "FieldValidation", "Params", "check_json_patch", "choice"]

R = TypeVar("R", bound=KubeResource)

FieldValidation = Literal["Strict", "Warn", "Ignore"]
Params = list[tuple[str, str]]  # module level: `Client.list` shadows `list` in the class

PATCH_CONTENT = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "apply": "application/apply-patch+yaml",  # JSON is YAML
}
_JSON_PATCH_OPS = ("add", "remove", "replace", "move", "copy", "test")


def choice(value: object, allowed: Sequence[str], what: str) -> str:
    if value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{what} must be one of {options}; got {value!r}")
    return str(value)


def check_json_patch(patch: object) -> None:
    if not isinstance(patch, Sequence) or isinstance(patch, (str, bytes)):
        raise TypeError("a JSON patch must be a list of operations like {'op': ..., 'path': ...}")
    for index, op in enumerate(patch):
        if not isinstance(op, Mapping) or "path" not in op:
            raise ValueError(f"patch[{index}] must be a mapping with 'op' and 'path'")
        choice(PatchOperation.model_validate(op).op, _JSON_PATCH_OPS, f"patch[{index}].op")


class ClientCore:
    """The connection and the request helper `Client` is built on (see `Client`)."""

    def __init__(
        self,
        credentials: Credentials | None = None,
        *,
        namespace: str | None = None,
        field_manager: str = "flarekit",
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        strict_fields: bool = False,
        limits: ReadLimits | None = None,
    ) -> None:
        creds = credentials if credentials is not None else default_credentials()
        if timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout}")
        self._transport = Transport(creds, timeout, retry or RetryPolicy(), limits)
        self.namespace = namespace or creds.namespace
        self.field_manager = field_manager
        self.strict_fields = strict_fields
        #: What this client learnt about its server (served groups, versions and kinds, CRDs
        #: read, fields found missing), kept until `forget()`.
        self.facts = ServerFacts(self._read_discovery)

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def server(self) -> str:
        return self._transport.server

    @property
    def api_client(self) -> Any:
        """The official `kubernetes.client.ApiClient` underneath, for a user's calls to APIs
        flarekit lacks. flarekit itself never sends through it: its requests all go through
        this client's transport, with one retry, timeout, warning and error policy."""
        return self._transport.api_client

    @property
    def timeout(self) -> float:
        """Seconds each request may take before it counts as unanswered."""
        return self._transport.timeout

    @property
    def unanswered_writes(self) -> int:
        """How many attempts of writes have got no answer so far (retried or not). Each may
        still be carried out by the server, so a caller undoing its writes compares this
        before and after a write to know whether to watch for a late one."""
        return self._transport.unanswered_writes

    @property
    def limits(self) -> ReadLimits:
        """What this client reads at most (answer sizes, watch lines, exec plugins)."""
        return self._transport.limits

    @property
    def retry(self) -> RetryPolicy:
        """How idempotent requests (and dropped streams) are retried."""
        return self._transport.retry

    def forget(self) -> None:
        """Drop what was learnt about the cluster (after installing or upgrading operators):
        served versions, CRDs and fields are read again on next use."""
        self.facts.forget()

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client(server={self.server!r}, namespace={self.namespace!r})"

    # -- helpers --------------------------------------------------------------------------------

    def _target(self, kind: type[KubeResource], namespace: str | None) -> Target:
        return Target.resolve(kind, namespace, self.namespace)

    def _object_target(self, obj: KubeResource, namespace: str | None) -> tuple[Target, str]:
        if not isinstance(obj, KubeResource):
            raise TypeError(f"expected a resource model instance, got {type(obj).__name__}")
        meta = metadata_of(obj)
        own = meta.namespace if meta is not None else None
        if own and namespace and own != namespace:
            raise ValueError(
                f"metadata.namespace is {own!r} but namespace={namespace!r} was passed"
            )
        target = self._target(type(obj), namespace or own)
        return target, str((meta.name if meta is not None else None) or "")

    @staticmethod
    def _write_query(
        dry_run: bool,
        field_validation: FieldValidation | None,
        field_manager: str | None,
    ) -> Params:
        query: Params = []
        if dry_run:
            query.append(("dryRun", "All"))
        if field_validation is not None:
            query.append(
                (
                    "fieldValidation",
                    choice(field_validation, ("Strict", "Warn", "Ignore"), "field_validation"),
                )
            )
        if field_manager:
            query.append(("fieldManager", field_manager))
        return query

    def _exchange(
        self,
        kind: type[R],
        target: Target,
        verb: str,
        method: str,
        name: str = "",
        subresource: str = "",
        *,
        query: Query = (),
        body: bytes | None = None,
        content_type: str | None = None,
        idempotent: bool,
        strict_fields: bool | None = None,
    ) -> tuple[R, int]:
        """One request whose answer is the object, and the answer's HTTP status (201: the
        write created it); `create` posts to the collection. A write is checked for fields
        the server did not keep."""
        path = target.path("" if verb == "create" else name, subresource)
        operation = target.operation(verb, name)
        validation = dict(query).get("fieldValidation")
        response = self._transport.request(
            operation,
            method,
            path,
            query=query,
            body=body,
            content_type=content_type,
            idempotent=idempotent,
            hold_back=is_unknown_field if body is not None and validation is None else None,
        )
        obj = kind.model_validate_json(response.data)
        if body is not None:
            strict = self.strict_fields if strict_fields is None else strict_fields
            self._check_kept(
                target, operation, subresource, body, content_type, response, obj, strict, query
            )
        return obj, response.status

    @staticmethod
    def _check_kept(
        target: Target,
        operation: Operation,
        subresource: str,
        body: bytes,
        content_type: str | None,
        response: Response,
        obj: KubeResource,
        strict: bool,
        query: Query,
    ) -> None:
        scope = Scope(
            subresource=subresource,
            status_subresource="status" in target.info.subresources,
            omit_empty=built_in_group(target.info.group),
        )
        sent, stored = json.loads(body), json.loads(response.data)
        if content_type == PATCH_CONTENT["json"]:
            paths = pruned_by_json_patch(sent, stored, scope)
        else:
            paths = pruned_fields(sent, stored, scope)
        validation = dict(query).get("fieldValidation")
        report_pruned(
            operation, paths, response.warnings, obj, strict=strict, field_validation=validation
        )

    @staticmethod
    def _check_components(obj: KubeResource, target: Target, check: bool) -> None:
        """Refuse, before any request, an AppWrapper holding what it should not."""
        if check and is_appwrapper(type(obj)):
            check_appwrapper(json.loads(dump(obj)), target.namespace or None)

    @staticmethod
    def _require_name(name: str, verb: str) -> str:
        if not name:
            raise ValueError(f"{verb} needs an object with metadata.name set")
        return name

    def _read_discovery(self, path: str, accept: str) -> tuple[str, bytes] | None:
        """GET a discovery document (or a CRD) for `ServerFacts`: its media type and body,
        None on 404."""
        try:
            response = self._transport.request(
                operation_for_path(path), "GET", path, accept=accept, idempotent=True
            )
        except NotFound:
            return None
        return str(response.raw.headers.get("Content-Type") or ""), response.data
