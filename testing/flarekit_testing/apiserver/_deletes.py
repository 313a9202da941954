"""DELETE of one object or a collection, finalizers, and namespace termination.

An object with finalizers is not removed: it gets `deletionTimestamp` (and a generation bump)
and stays until an update removes the last finalizer. Deleting a namespace marks it
Terminating and then does what the namespace controller does: deletes everything in it and
removes the namespace once it is empty. `propagationPolicy: Foreground` / `Orphan` add the
`foregroundDeletion` / `orphan` finalizer that the garbage collector (`_kube_controllers`)
acts on; with the default (background) policy it deletes the dependents once the owner is
gone.
"""

from __future__ import annotations

import json
from typing import Any

from flarekit_testing.apiserver import _errors, _meta
from flarekit_testing.apiserver._kube_controllers import FOREGROUND, ORPHAN
from flarekit_testing.apiserver._request import (
    Request,
    Response,
    deprecation_warnings,
    matcher,
    present,
    require_namespace,
)
from flarekit_testing.apiserver._store import Key, Store

JSON = dict[str, Any]

POLICIES = ("Foreground", "Background", "Orphan")


def _options(req: Request) -> JSON:
    """DeleteOptions from the body and the query, validated as the apiserver does."""
    try:
        body = json.loads(req.body) if req.body.strip() else {}
    except ValueError as exc:
        raise _errors.bad_request(f"error decoding DeleteOptions: {exc}") from None
    if not isinstance(body, dict):
        raise _errors.bad_request("the body of a delete must be a DeleteOptions object")
    opts = dict(body)
    if req.param("propagationPolicy"):
        opts["propagationPolicy"] = req.param("propagationPolicy")
    if req.query.get("dryRun"):
        opts["dryRun"] = req.query["dryRun"]
    causes = []
    policy = opts.get("propagationPolicy")
    if policy is not None and policy not in POLICIES:
        supported = ", ".join(f'"{p}"' for p in POLICIES)
        causes.append(
            _errors.Cause(
                "FieldValueNotSupported",
                f'Unsupported value: "{policy}": supported values: {supported}',
                "propagationPolicy",
            )
        )
    for value in opts.get("dryRun") or []:
        if value != "All":
            causes.append(
                _errors.Cause(
                    "FieldValueNotSupported",
                    f'Unsupported value: "{value}": supported values: "All"',
                    "dryRun",
                )
            )
    if causes:
        raise _errors.invalid("DeleteOptions", "meta.k8s.io", "", causes)
    return opts


def _mark_deleting(obj: JSON, namespace_phase: bool) -> JSON:
    meta = obj["metadata"]
    if not meta.get("deletionTimestamp"):
        if meta.get("generation"):
            meta["generation"] = int(meta["generation"]) + 1
        meta["deletionTimestamp"] = _meta.timestamp()
    meta["deletionGracePeriodSeconds"] = 0
    if namespace_phase:
        obj.setdefault("status", {})["phase"] = "Terminating"
    return obj


def _success(req: Request, obj: JSON) -> JSON:
    meta = obj.get("metadata") or {}
    details = {"name": meta.get("name", ""), "kind": req.rt.plural, "uid": meta.get("uid", "")}
    if req.rt.group:
        details["group"] = req.rt.group
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }


def _delete_one(store: Store, req: Request, key: Key, opts: JSON, dry_run: bool) -> JSON:
    """Delete or start deleting one object; returns what the apiserver would answer."""
    old = store.get(key)
    if old is None:
        raise _errors.not_found(req.rt.plural, req.rt.group, key[3])
    pre = opts.get("preconditions") or {}
    meta = old["metadata"]
    if pre.get("uid") and pre["uid"] != meta.get("uid"):
        raise _errors.conflict(
            req.rt.plural,
            req.rt.group,
            key[3],
            f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: "
            f"{meta.get('uid')}",
        )
    if pre.get("resourceVersion") and str(pre["resourceVersion"]) != meta.get("resourceVersion"):
        raise _errors.conflict(
            req.rt.plural,
            req.rt.group,
            key[3],
            f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
            f"ResourceVersion in object meta: {meta.get('resourceVersion')}",
        )
    is_namespace = req.rt.group == "" and req.rt.plural == "namespaces"
    policy = opts.get("propagationPolicy")
    if opts.get("orphanDependents") is True:
        policy = "Orphan"
    wanted = {"Foreground": FOREGROUND, "Orphan": ORPHAN}.get(str(policy))
    if wanted and not is_namespace and not meta.get("deletionTimestamp"):
        meta["finalizers"] = [*(meta.get("finalizers") or []), wanted]
    if meta.get("finalizers") or is_namespace:
        if meta.get("deletionTimestamp"):
            # already deleting: kube-apiserver answers the object its finalizers still hold
            return _success(req, old) if is_namespace else present(old, req.rt, req.version.name)
        updated = _mark_deleting(old, is_namespace)
        if dry_run:
            return present(updated, req.rt, req.version.name)
        stored = store.commit(key, updated)
        if is_namespace:
            finalize_namespace(store, key[3])
        return present(stored, req.rt, req.version.name)
    if not dry_run:
        store.commit(key, None)
    return _success(req, old)


def delete(store: Store, req: Request) -> Response:
    opts = _options(req)
    dry_run = "All" in (opts.get("dryRun") or [])
    protected = ("default", "kube-system", "kube-public")
    if req.rt.group == "" and req.rt.plural == "namespaces" and req.name in protected:
        raise _errors.forbidden("namespaces", "", req.name, "this namespace may not be deleted")
    with store.lock:
        if req.rt.namespaced:
            require_namespace(store, req, req.name, creating=False)
        body = _delete_one(store, req, req.key(), opts, dry_run)
        if req.rt.namespaced and not dry_run:
            finalize_namespace(store, req.namespace)
    return Response(200, body, deprecation_warnings(req))


def delete_collection(store: Store, req: Request) -> Response:
    opts = _options(req)
    dry_run = "All" in (opts.get("dryRun") or [])
    matches = matcher(req)
    namespace = req.namespace or None
    with store.lock:
        if req.rt.namespaced and namespace is not None:
            require_namespace(store, req, "", creating=False)
        items = [o for o in store.items(*req.rt.bucket, namespace) if matches(o)]
        deleted = []
        for obj in items:
            meta = obj["metadata"]
            key = (*req.rt.bucket, meta.get("namespace", ""), meta["name"])
            answer = _delete_one(store, req, key, {"dryRun": opts.get("dryRun")}, dry_run)
            deleted.append(obj if answer.get("kind") == "Status" else answer)
        if namespace is not None and not dry_run:
            finalize_namespace(store, namespace)
        rv = store.resource_version
    body = {
        "apiVersion": req.api_version,
        "kind": req.rt.list_kind,
        "metadata": {"resourceVersion": str(rv)},
        "items": [present(o, req.rt, req.version.name) for o in deleted],
    }
    return Response(200, body, deprecation_warnings(req))


def finalize_namespace(store: Store, namespace: str) -> None:
    """Play the namespace controller for a terminating namespace: empty it, then remove it."""
    with store.lock:
        ns_key: Key = ("", "namespaces", "", namespace)
        ns = store.get(ns_key)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return
        for key in store.keys_in_namespace(namespace):
            obj = store.get(key)
            if obj is None:
                continue
            if obj["metadata"].get("finalizers"):
                if not obj["metadata"].get("deletionTimestamp"):
                    store.commit(key, _mark_deleting(obj, False))
            else:
                store.commit(key, None)
        if not store.keys_in_namespace(namespace):
            store.commit(ns_key, None)
