"""`Client`: typed get/list/create/replace/patch/apply/delete/watch for every generated model.

One generic client instead of one class per kind: the model class says where its objects
live (`resource_info()`), and the TypeVar makes `client.get(RayCluster, "x")` a `RayCluster`
to type checkers and at run time. Every answer is validated from bytes into the model, every
failure is a `flarekit` exception, and server warnings become `ServerWarning`s. The
connection and the request helper every verb uses are `ClientCore` (`_core`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, TypeVar

from flarekit._json import JsonObject, JsonValue
from flarekit._objects import metadata_of
from flarekit.client._codec import (
    ResourceList,
    StatusBody,
    decode_page,
    dump,
    dump_apply,
    object_or_status,
)
from flarekit.client._components import check_appwrapper, check_patch_components, is_appwrapper
from flarekit.client._core import (
    PATCH_CONTENT,
    ClientCore,
    FieldValidation,
    Params,
    check_json_patch,
    choice,
)
from flarekit.client._errors import AlreadyExists, ApiError, ApiUnavailable, Conflict, NotFound
from flarekit.client._fingerprint import CREATED_FROM, fingerprinted
from flarekit.client._list import ListIterator
from flarekit.client._portforward import PortForward
from flarekit.client._resource import Target, operation_for_path, selector
from flarekit.client._transport import JSON_TYPE, NO_READ_TIMEOUT, Query, Response
from flarekit.client._watch import READ_MARGIN, Watch
from flarekit_models import KubeResource

if TYPE_CHECKING:
    pass

__all__ = ["CREATED_FROM", "Client", "FieldValidation", "PatchType", "PropagationPolicy"]

R = TypeVar("R", bound=KubeResource)

PropagationPolicy = Literal["Foreground", "Background", "Orphan"]
PatchType = Literal["merge", "json", "apply"]
PatchBody = KubeResource | Mapping[str, JsonValue] | Sequence[Mapping[str, JsonValue]]


class Client(ClientCore):
    """A connection to one cluster, with typed methods for every resource model.

    `Client()` uses the latest `login()`, else the kubeconfig from the usual places, else the
    in-cluster service account; pass `Credentials` to choose. `namespace` overrides the
    credentials' default namespace; `field_manager` names this client in managedFields (and is
    required by server-side apply); `timeout` bounds each attempt of a request in seconds, from
    sending it to the last byte of the answer; `retry` decides how idempotent requests are
    retried on 429/503 and lost connections; `limits` bounds what the client reads (answer
    sizes, watch lines, exec credential plugins: see `ReadLimits`).

    After every write the request is compared with the stored object the server answers
    with; fields it dropped are a `PrunedFieldsWarning`, or with `strict_fields=True` (here or
    per call) a `PrunedFields` error raised after the write (see `flarekit.client._dropped`).
    """

    # -- reads ----------------------------------------------------------------------------------

    def get_raw(self, path: str, *, query: Query = ()) -> bytes:
        """The body of a GET of any API path, for endpoints without a model (discovery
        documents such as ``/apis/ray.io``, ``/version``); `NotFound` on 404, and the same
        retries, warnings and errors as every other call."""
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/': got {path!r}")
        operation = operation_for_path(path)
        return self._transport.send_json(operation, "GET", path, query=query, idempotent=True)

    def open_subresource(
        self,
        kind: type[KubeResource],
        name: str,
        subresource: str,
        *,
        namespace: str | None = None,
        query: Query = (),
        stream: bool = False,
    ) -> Response:
        """A GET of a subresource whose answer is not an object (a pod's `log`): the raw
        response, streaming without a read timeout when `stream` (close it when done)."""
        target = self._target(kind, namespace)
        return self._transport.request(
            target.operation("get", name).with_subresource(subresource),
            "GET",
            target.path(name, subresource),
            query=query,
            idempotent=True,
            stream=stream,
            read_timeout=NO_READ_TIMEOUT if stream else None,
        )

    def port_forward(
        self,
        pod: str,
        port: int,
        *,
        namespace: str | None = None,
        local_port: int = 0,
        address: str = "127.0.0.1",
    ) -> PortForward:
        """A local port (`local_port`, 0: any free one) relaying each connection to `port` of
        `pod` through the API server, as `kubectl port-forward` does; use it in a ``with``
        block (``with client.port_forward("head", 10001) as forward: forward.local_port``)."""
        return PortForward(
            self._transport,
            namespace or self.namespace,
            self._require_name(pod, "port_forward"),
            port,
            local_port=local_port,
            address=address,
        )

    def get(self, kind: type[R], name: str, *, namespace: str | None = None) -> R:
        """The object `name` of this kind (`NotFound` if there is none)."""
        target = self._target(kind, namespace)
        return self._exchange(kind, target, "get", "GET", name, idempotent=True)[0]

    def get_status(self, kind: type[R], name: str, *, namespace: str | None = None) -> R:
        """The object read through its `status` subresource."""
        target = self._target(kind, namespace)
        return self._exchange(kind, target, "get", "GET", name, "status", idempotent=True)[0]

    def list(
        self,
        kind: type[R],
        *,
        namespace: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
        field_selector: str | Mapping[str, str] | None = None,
        page_size: int = 500,
    ) -> ListIterator[R]:
        """Objects of a kind in one namespace (`ALL_NAMESPACES` for all), fetched lazily in
        pages of `page_size`; selectors are strings (`"a=b,c!=d"`) or `{label: value}`."""
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, got {page_size}")
        target = Target.resolve(kind, namespace, self.namespace, allow_all=True)
        query = self._selectors(label_selector, field_selector)
        query.append(("limit", str(page_size)))
        page_model = ResourceList[kind]  # type: ignore[valid-type]
        operation = target.operation("list")
        path = target.path()

        def fetch(token: str) -> ResourceList[R]:
            extra = [("continue", token)] if token else []
            data = self._transport.send_json(
                operation, "GET", path, query=[*query, *extra], idempotent=True
            )
            page: ResourceList[R] = decode_page(page_model, data)
            return page

        return ListIterator(fetch)

    @staticmethod
    def _selectors(
        label_selector: str | Mapping[str, str] | None,
        field_selector: str | Mapping[str, str] | None,
    ) -> Params:
        query: Params = []
        labels = selector(label_selector, "label_selector")
        fields = selector(field_selector, "field_selector")
        if labels:
            query.append(("labelSelector", labels))
        if fields:
            query.append(("fieldSelector", fields))
        return query

    def watch(
        self,
        kind: type[R],
        *,
        namespace: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
        field_selector: str | Mapping[str, str] | None = None,
        resource_version: str | None = None,
        timeout: float | None = None,
    ) -> Watch[R]:
        """Changes to objects of a kind as `WatchEvent`s, for `timeout` seconds (None: until
        closed). Without `resource_version` it starts with the current objects as ADDED."""
        target = Target.resolve(kind, namespace, self.namespace, allow_all=True)
        query = self._selectors(label_selector, field_selector)
        operation = target.operation("watch")
        path = target.path()

        def open_stream(version: str, seconds: int) -> Response:
            params = [
                *query,
                ("watch", "true"),
                ("allowWatchBookmarks", "true"),
                ("resourceVersion", version),
                ("timeoutSeconds", str(seconds)),
            ]
            return self._transport.request(
                operation,
                "GET",
                path,
                query=params,
                idempotent=True,
                stream=True,
                read_timeout=seconds + READ_MARGIN,
            )

        def relist() -> tuple[Sequence[R], str]:
            pages = self.list(
                kind,
                namespace=namespace,
                label_selector=label_selector,
                field_selector=field_selector,
            )
            items = [*pages]
            return items, pages.resource_version

        retry = self._transport.retry
        return Watch(kind, operation, open_stream, relist, resource_version, timeout, retry)

    # -- writes ---------------------------------------------------------------------------------

    def create(
        self,
        obj: R,
        *,
        namespace: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
        field_manager: str | None = None,
        strict_fields: bool | None = None,
        check_components: bool = True,
    ) -> R:
        """Create `obj`; returns it as stored. An AppWrapper's components are checked first
        (`flarekit.client._components`) unless `check_components=False`.

        The object is sent with an annotation (`CREATED_FROM`) that fingerprints what was
        sent. So a create whose answer was lost (a timeout: the server may have created it
        all the same) is resolved by reading the object back, and creating the same object
        again (a resubmit after such an error) returns the stored one instead of raising
        `AlreadyExists`; a different object of that name is still `AlreadyExists`.
        """
        target, name = self._object_target(obj, namespace)
        self._check_components(obj, target, check_components)
        query = self._write_query(dry_run, field_validation, field_manager)
        body, fingerprint = fingerprinted(obj) if name and not dry_run else (dump(obj), "")
        kind = type(obj)
        try:
            return self._exchange(
                kind,
                target,
                "create",
                "POST",
                name,
                query=query,
                body=body,
                content_type=JSON_TYPE,
                idempotent=False,
                strict_fields=strict_fields,
            )[0]
        except AlreadyExists:
            found = self._created_from(kind, target, name, fingerprint, 0.0)
            if found is None:
                raise
            return found
        except ApiError as exc:
            if not fingerprint or (exc.code is not None and exc.code != 504):
                raise  # answered: the server did not create it
            found = self._created_from(kind, target, name, fingerprint, self.timeout)
            if found is None:
                raise ApiUnavailable(
                    exc.operation,
                    exc.code,
                    exc.reason,
                    f"{exc.message}; the object had not appeared {self.timeout:g}s later but "
                    "may still be created: creating the same object again is safe (it is "
                    f"recognised by its {CREATED_FROM} annotation)",
                ) from exc
            return found

    def _created_from(
        self, kind: type[R], target: Target, name: str, fingerprint: str, settle: float
    ) -> R | None:
        """The stored object `name` if it was created from what `fingerprint` says, looked
        for during `settle` seconds (a write in flight may land late); else None."""
        if not fingerprint:
            return None
        deadline = time.monotonic() + settle
        while True:
            try:
                found = self.get(kind, name, namespace=target.namespace or None)
            except NotFound:
                if time.monotonic() >= deadline:
                    return None
                time.sleep(0.05)
                continue
            meta = metadata_of(found)
            annotations = (meta.annotations if meta is not None else None) or {}
            return found if annotations.get(CREATED_FROM) == fingerprint else None

    def replace(
        self,
        obj: R,
        *,
        namespace: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
        field_manager: str | None = None,
        strict_fields: bool | None = None,
        check_components: bool = True,
    ) -> R:
        """Replace the stored object with `obj`; with `metadata.resourceVersion` set, a
        concurrent change makes this fail with `Conflict` instead of overwriting it. An
        AppWrapper's components are checked first unless `check_components=False`."""
        self._check_components(obj, self._object_target(obj, namespace)[0], check_components)
        return self._replace(
            obj, "", namespace, dry_run, field_validation, field_manager, strict_fields
        )

    def update(
        self,
        kind: type[R],
        name: str,
        change: Callable[[R], R | None],
        *,
        namespace: str | None = None,
        attempts: int = 5,
        field_manager: str | None = None,
    ) -> R:
        """Read the object `name`, apply `change` to it (edit it in place, or return a new
        one) and replace it; when someone else changed it in between (`Conflict`), read it
        again and retry, up to `attempts` times with the client's backoff, as client-go's
        RetryOnConflict. Returns the object as stored."""
        if attempts < 1:
            raise ValueError(f"attempts must be at least 1, got {attempts}")
        for attempt in range(1, attempts + 1):
            current = self.get(kind, name, namespace=namespace)
            read = metadata_of(current)
            version = read.resource_version if read is not None else None
            changed = change(current)
            wanted = current if changed is None else changed
            meta = metadata_of(wanted)
            if meta is not None and not meta.resource_version:
                meta.resource_version = version  # replace only what was read
            try:
                return self.replace(wanted, namespace=namespace, field_manager=field_manager)
            except Conflict:
                if attempt == attempts:
                    raise
                self.retry.wait(attempt)
        raise AssertionError("unreachable")

    def replace_status(
        self,
        obj: R,
        *,
        namespace: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
        field_manager: str | None = None,
        strict_fields: bool | None = None,
    ) -> R:
        """Replace the `status` of the stored object (through the status subresource)."""
        return self._replace(
            obj, "status", namespace, dry_run, field_validation, field_manager, strict_fields
        )

    def _replace(
        self,
        obj: R,
        subresource: str,
        namespace: str | None,
        dry_run: bool,
        field_validation: FieldValidation | None,
        field_manager: str | None,
        strict_fields: bool | None = None,
    ) -> R:
        target, name = self._object_target(obj, namespace)
        return self._exchange(
            type(obj),
            target,
            "update",
            "PUT",
            self._require_name(name, "replace"),
            subresource,
            query=self._write_query(dry_run, field_validation, field_manager),
            body=dump(obj),
            content_type=JSON_TYPE,
            idempotent=True,
            strict_fields=strict_fields,
        )[0]

    def patch(
        self,
        kind: type[R],
        name: str,
        patch: PatchBody,
        *,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
        field_manager: str | None = None,
        force: bool | None = None,
        strict_fields: bool | None = None,
        check_components: bool = True,
    ) -> R:
        """Patch the object `name`: `patch_type` "merge" (RFC 7386: a partial object or model),
        "json" (RFC 6902: a list of operations) or "apply" (server-side apply of a full
        object; `force` takes over fields other managers own). Components an AppWrapper
        patch adds are checked first unless `check_components=False`."""
        if check_components and is_appwrapper(kind):
            where = self._target(kind, namespace).namespace or None
            if patch_type == "json":
                check_patch_components(patch, where)
            elif isinstance(patch, (KubeResource, Mapping)):
                data = json.loads(dump(patch))
                check_appwrapper(data, where)
        return self._patch(
            kind, name, patch, "", namespace, patch_type, dry_run, field_validation,
            field_manager, force, strict_fields,
        )[0]  # fmt: skip

    def patch_status(
        self,
        kind: type[R],
        name: str,
        patch: PatchBody,
        *,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
        field_manager: str | None = None,
        force: bool | None = None,
        strict_fields: bool | None = None,
    ) -> R:
        """Like `patch`, through the `status` subresource (only status changes are kept)."""
        return self._patch(
            kind, name, patch, "status", namespace, patch_type, dry_run, field_validation,
            field_manager, force, strict_fields,
        )[0]  # fmt: skip

    def apply(
        self,
        obj: R,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
        strict_fields: bool | None = None,
        check_components: bool = True,
    ) -> R:
        """Server-side apply `obj` (created if missing): the fields set in it become owned by
        `field_manager` (the client's by default); `Conflict` lists fields others own unless
        `force=True`. An AppWrapper's components are checked first unless
        `check_components=False`."""
        return self.apply_tracked(
            obj, namespace=namespace, field_manager=field_manager, force=force, dry_run=dry_run,
            field_validation=field_validation, strict_fields=strict_fields,
            check_components=check_components,
        )[0]  # fmt: skip

    def apply_tracked(
        self,
        obj: R,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
        strict_fields: bool | None = None,
        check_components: bool = True,
    ) -> tuple[R, bool]:
        """`apply`, also saying whether it created the object (the server answered 201
        Created): what a caller that undoes its writes after a failure needs, without
        reading the object first."""
        target, name = self._object_target(obj, namespace)
        self._check_components(obj, target, check_components)
        stored, status = self._patch(
            type(obj), self._require_name(name, "apply"), obj, "", target.namespace or None,
            "apply", dry_run, field_validation, field_manager, force, strict_fields,
        )  # fmt: skip
        return stored, status == 201

    def _patch(
        self,
        kind: type[R],
        name: str,
        patch: PatchBody,
        subresource: str,
        namespace: str | None,
        patch_type: PatchType,
        dry_run: bool,
        field_validation: FieldValidation | None,
        field_manager: str | None,
        force: bool | None,
        strict_fields: bool | None = None,
    ) -> tuple[R, int]:
        content_type = PATCH_CONTENT[choice(patch_type, tuple(PATCH_CONTENT), "patch_type")]
        if patch_type == "json":
            check_json_patch(patch)
        elif isinstance(patch, KubeResource) and not isinstance(patch, kind):
            raise TypeError(f"patch is a {type(patch).__name__}, not a {kind.__name__}")
        elif not isinstance(patch, (KubeResource, Mapping)):
            raise TypeError(f"a {patch_type} patch must be a mapping or a model instance")
        if patch_type == "apply":
            field_manager = field_manager or self.field_manager
        elif force is not None:
            raise ValueError("force is only meaningful with patch_type='apply'")
        query = self._write_query(dry_run, field_validation, field_manager)
        if force is not None:
            query.append(("force", "true" if force else "false"))
        return self._exchange(
            kind,
            self._target(kind, namespace),
            "patch",
            "PATCH",
            name,
            subresource,
            query=query,
            body=dump_apply(patch) if patch_type == "apply" else dump(patch),
            content_type=content_type,
            idempotent=patch_type != "json",
            strict_fields=strict_fields,
        )

    def delete(
        self,
        kind: type[R],
        name: str,
        *,
        namespace: str | None = None,
        propagation_policy: PropagationPolicy | None = None,
        grace_period_seconds: int | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        dry_run: bool = False,
    ) -> R | None:
        """Delete the object `name`. `uid` and `resource_version` are preconditions (`Conflict`
        if the stored object differs). Returns the object while finalizers hold it back (it
        then has `deletionTimestamp`), or None when the server reports it gone."""
        options: JsonObject = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if propagation_policy is not None:
            options["propagationPolicy"] = choice(
                propagation_policy, ("Foreground", "Background", "Orphan"), "propagation_policy"
            )
        if grace_period_seconds is not None:
            if grace_period_seconds < 0:
                raise ValueError("grace_period_seconds must not be negative")
            options["gracePeriodSeconds"] = grace_period_seconds
        preconditions = {
            k: v for k, v in (("uid", uid), ("resourceVersion", resource_version)) if v
        }
        if preconditions:
            options["preconditions"] = preconditions
        target = self._target(kind, namespace)
        data = self._transport.send_json(
            target.operation("delete", name),
            "DELETE",
            target.path(name),
            query=[("dryRun", "All")] if dry_run else [],
            body=dump(options),
            content_type=JSON_TYPE,
            idempotent=True,
        )
        answer = object_or_status(kind).validate_json(data)
        return None if isinstance(answer, StatusBody) else answer
