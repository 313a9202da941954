"""GET of one object, LIST with selectors and pagination, and opening a WATCH.

Pagination follows etcd-backed lists: items are ordered by storage key, a `continue` token
pins the list's resourceVersion so later pages see the same snapshot, and a token whose
version has been compacted answers 410 Expired with an "inconsistent" token to resume from.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import itertools
import json
from dataclasses import dataclass
from typing import Any

from flarekit_testing.apiserver import _errors
from flarekit_testing.apiserver._request import (
    Request,
    Response,
    deprecation_warnings,
    matcher,
    present,
    require_namespace,
)
from flarekit_testing.apiserver._store import Store, TooOld, Watcher

JSON = dict[str, Any]


def get(store: Store, req: Request) -> Response:
    if req.rt.namespaced:
        require_namespace(store, req, req.name, creating=False)
    obj = store.peek(req.key())
    if obj is None:
        raise _errors.not_found(req.rt.plural, req.rt.group, req.name)
    if req.subresource == "scale":
        return Response(200, scale_view(req, obj), deprecation_warnings(req))
    return Response(200, present(obj, req.rt, req.version.name), deprecation_warnings(req))


def scale_view(req: Request, obj: JSON) -> JSON:
    """The autoscaling/v1 Scale for an object, read through the CRD's scale paths."""
    spec = req.version.scale
    assert spec is not None
    meta = obj.get("metadata") or {}
    status: JSON = {"replicas": read_path(obj, spec.status_replicas_path) or 0}
    if spec.label_selector_path:
        selector = read_path(obj, spec.label_selector_path)
        if selector is not None:
            status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": read_path(obj, spec.spec_replicas_path) or 0},
        "status": status,
    }


def read_path(obj: Any, path: str) -> Any:
    for part in path.lstrip(".").split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def encode_continue(rv: int, start: str) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    try:
        padded = token + "=" * (-len(token) % 4)
        doc = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if doc.get("v") != "meta.k8s.io/v1":
            raise ValueError("continue key is not valid: incorrect encoded start resourceVersion")
        return int(doc["rv"]), str(doc["start"])
    except (ValueError, KeyError, TypeError, binascii.Error, AttributeError) as exc:
        raise _errors.bad_request(f"continue key is not valid: {exc}") from None


def _int_param(req: Request, name: str) -> int | None:
    raw = req.param(name)
    if raw in (None, ""):
        return None
    try:
        return int(raw)
    except ValueError:
        raise _errors.bad_request(f'invalid value for {name}: "{raw}"') from None


def list_objects(store: Store, req: Request) -> Response:
    # A namespace that does not exist lists empty, as on kube-apiserver (not 404).
    namespace = req.namespace or None
    matches = matcher(req)
    limit = _int_param(req, "limit") or 0
    if limit < 0:
        raise _errors.bad_request("list limit must not be negative")
    token = req.param("continue")
    start = ""
    with store.lock:
        if token:
            if req.param("resourceVersion"):
                raise _errors.bad_request(
                    "specifying resource version is not allowed when using continue"
                )
            list_rv, start = decode_continue(token)
            try:
                listing = store.listing_at(list_rv, *req.rt.bucket, namespace)
            except TooOld:
                raise _errors.expired(
                    _errors.CONTINUE_EXPIRED, encode_continue(store.resource_version, start)
                ) from None
        elif req.param("resourceVersionMatch") == "Exact":
            list_rv = _int_param(req, "resourceVersion") or 0
            try:
                listing = store.listing_at(list_rv, *req.rt.bucket, namespace)
            except TooOld as exc:
                raise _errors.expired(str(exc)) from None
        else:
            list_rv = store.resource_version
            listing = store.listing(*req.rt.bucket, namespace)
    first = bisect.bisect_left(listing, (start,)) if start else 0
    filtered = bool(req.param("labelSelector") or req.param("fieldSelector"))
    selected: list[tuple[str, JSON]] = []
    more = False
    for entry in itertools.islice(listing, first, None):
        if filtered and not matches(entry[1]):
            continue
        if limit and len(selected) == limit:
            more = True
            break
        selected.append(entry)
    meta: JSON = {"resourceVersion": str(list_rv)}
    if more:
        meta["continue"] = encode_continue(list_rv, selected[-1][0] + "\x00")
        if not filtered:
            meta["remainingItemCount"] = len(listing) - first - len(selected)
    body = {
        "apiVersion": req.api_version,
        "kind": req.rt.list_kind,
        "metadata": meta,
        "items": [present(o, req.rt, req.version.name) for _, o in selected],
    }
    return Response(200, body, deprecation_warnings(req))


@dataclass
class WatchPlan:
    """An opened watch (or the 410 to send as its only event) and how to run it."""

    watcher: Watcher | None
    error: _errors.ApiError | None
    timeout: float | None
    bookmarks: bool
    warnings: list[str]


def open_watch(store: Store, req: Request) -> WatchPlan:
    # Watching a namespace that does not exist (yet) is allowed, as on kube-apiserver.
    namespace = req.namespace or None
    matches = matcher(req)
    rv = req.param("resourceVersion")
    since = None if rv in (None, "", "0") else _int_param(req, "resourceVersion")
    timeout = _int_param(req, "timeoutSeconds")
    warnings = deprecation_warnings(req)
    bookmarks = req.flag("allowWatchBookmarks")
    if req.flag("sendInitialEvents"):
        since = None
    try:
        # A watch that starts with the current state ends it with a bookmark, when bookmarks
        # are allowed (kubectl wait and client-go's watch lists wait for it).
        watcher = store.watch(*req.rt.bucket, namespace, since, matches, bookmarks)
    except TooOld as exc:
        return WatchPlan(None, _errors.expired(str(exc)), timeout, bookmarks, warnings)
    return WatchPlan(watcher, None, timeout, bookmarks, warnings)
