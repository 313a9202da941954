"""Create, update (PUT) and patch (merge, JSON, apply) of objects, their status and scale.

Every write goes through the same steps a custom resource write takes in kube-apiserver:
decode, check type and names, keep server-owned metadata, isolate spec from status when the
status subresource exists, default + prune + validate against the version's schema, enforce
optimistic concurrency, bump generation, record field managers, then store (unless dryRun).
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from flarekit_testing.apiserver import _apply, _errors, _meta
from flarekit_testing.apiserver._admission import AdmissionRequest, mutate, validate
from flarekit_testing.apiserver._deletes import finalize_namespace
from flarekit_testing.apiserver._json import copy_json
from flarekit_testing.apiserver._patch import PatchError, apply_json_patch, apply_merge_patch
from flarekit_testing.apiserver._reads import read_path, scale_view
from flarekit_testing.apiserver._request import (
    Request,
    Response,
    WriteOptions,
    check_type,
    decode_body,
    deprecation_warnings,
    present,
    require_namespace,
    to_storage,
    write_options,
)
from flarekit_testing.apiserver._resources import strategy_of
from flarekit_testing.apiserver._store import Store
from flarekit_testing.apiserver._strategic import apply_strategic
from flarekit_testing.apiserver._structural import admit, compiled

JSON = dict[str, Any]

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
CR_PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, APPLY_PATCH)


class Admission:
    """Default, prune and validate an object against a version's schema; collect warnings."""

    def __init__(self, req: Request, opts: WriteOptions, patching: bool = False) -> None:
        self.req = req
        self.opts = opts
        self.patching = patching
        self.warnings: list[str] = deprecation_warnings(req)

    def __call__(self, obj: JSON, sent: bool = True) -> tuple[JSON, list[_errors.Cause]]:
        """`sent`: the object is the request's (False: after webhooks, whose own unknown
        fields are pruned silently)."""
        schema = self.req.version.schema
        if schema is None:
            return obj, []

        scale = self.req.version.scale
        replicas_path = scale.spec_replicas_path if scale is not None else None
        result = admit(obj, schema, strategy_of(self.req.rt).name_errors, replicas_path)
        unknown = list(result.unknown_fields) if sent else []
        if unknown and self.opts.field_validation == "Strict":
            detail = "strict decoding error: " + ", ".join(f'unknown field "{u}"' for u in unknown)
            if not self.patching:
                kind, version = self.req.rt.kind, self.req.version.name
                detail = f'{kind} in version "{version}" cannot be handled as a {kind}: {detail}'
            raise _errors.bad_request(detail)
        if unknown and self.opts.field_validation == "Warn":
            self.warnings.extend(f'unknown field "{u}"' for u in unknown)
        causes = list(result.causes)
        return dict(result.obj), causes


def _invalid(req: Request, name: str, causes: list[_errors.Cause]) -> _errors.ApiError:
    return _errors.invalid(req.rt.kind, req.rt.group, name, causes)


def _webhook_request(req: Request, obj: JSON, old: JSON | None) -> AdmissionRequest:
    meta = obj.get("metadata") or {}
    return AdmissionRequest(
        "UPDATE" if old is not None else "CREATE",
        req.rt.group,
        req.rt.plural,
        req.rt.kind,
        req.namespace,
        str(meta.get("name") or req.name),
        req.user,
        obj,
        old,
        req.version.schema,
    )


def _mutated(
    store: Store,
    req: Request,
    admission: Admission,
    admitted: tuple[JSON, list[_errors.Cause]],
    old: JSON | None,
) -> tuple[JSON, list[_errors.Cause]]:
    """The operators' mutating webhooks on what the schema admitted, then the schema again
    when one changed the object (its causes replace the first ones)."""
    obj = admitted[0]
    if not store.webhooks or req.subresource:
        return admitted
    asked = _webhook_request(req, obj, old)
    if not mutate(store.webhooks, asked):
        return admitted
    return admission(asked.obj, sent=False)


def _validated(store: Store, req: Request, obj: JSON, old: JSON | None) -> None:
    """The operators' validating webhooks (a refusal raises)."""
    if store.webhooks and not req.subresource:
        validate(store.webhooks, _webhook_request(req, obj, old))


def _place(req: Request, obj: JSON) -> None:
    """Fill in or check metadata.namespace against the URL."""
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise _invalid(
            req, "", [_errors.Cause("FieldValueInvalid", "must be an object", "metadata")]
        )
    if not req.rt.namespaced:
        meta.pop("namespace", None)
        return
    given = meta.get("namespace")
    if given and given != req.namespace:
        raise _errors.bad_request(
            "the namespace of the provided object does not match the namespace sent on the "
            "request"
        )
    meta["namespace"] = req.namespace


def create(store: Store, req: Request, doc: JSON | None = None, applied: bool = False) -> Response:
    """POST: a new object (also the first apply of an object, when `applied`)."""
    opts = write_options(req, "PatchOptions" if applied else "CreateOptions")
    obj = decode_body(req) if doc is None else doc
    check_type(req, obj)
    _place(req, obj)
    meta = obj["metadata"]
    if meta.get("resourceVersion") and not applied:
        raise _errors.bad_request("resourceVersion should not be set on objects to be created")
    admission = Admission(req, opts, patching=applied)
    with store.lock:
        if req.rt.namespaced:
            require_namespace(store, req, str(meta.get("name") or ""), creating=True)
        if not meta.get("name") and meta.get("generateName"):
            for _ in range(8):
                meta["name"] = _meta.generate_name(str(meta["generateName"]))
                if store.get(req.key(meta["name"])) is None:
                    break
        name = str(meta.get("name") or "")
        managed = meta.get("managedFields") if applied else None
        _meta.strip_for_create(obj)
        _meta.isolate_for_main(obj, None, req.version.status_subresource)
        strategy = strategy_of(req.rt)
        strategy.default(obj)
        obj, causes = admission(obj)
        if not applied:
            # The writer owns what it sent and what decoding defaulted, not what the server
            # sets next (allocations, admission plugins, webhooks).
            _apply.record_update(
                strategy.zero(),
                obj,
                opts.manager,
                req.api_version,
                "",
                req.version.status_subresource,
                req.version.schema,
            )
        strategy.prepare_create(obj)
        obj, causes = _mutated(store, req, admission, (obj, causes), None)
        if req.rt.builtin:
            causes += _meta.validate_meta_types(obj)
        causes += strategy.validate(obj)
        if causes:
            raise _invalid(req, name, causes)
        _validated(store, req, obj, None)
        if store.get(req.key(name)) is not None:
            raise _errors.already_exists(req.rt.plural, req.rt.group, name)
        meta = obj["metadata"]
        meta.update(uid=_meta.new_uid(), creationTimestamp=_meta.timestamp(), generation=1)
        if not strategy.generation:
            meta.pop("generation")
        if applied:
            meta["managedFields"] = managed
        if opts.dry_run:
            return Response(201, present(obj, req.rt, req.version.name), admission.warnings)
        stored = store.commit(req.key(name), to_storage(obj, req.rt))
    return Response(201, present(stored, req.rt, req.version.name), admission.warnings)


def _existing(store: Store, req: Request) -> JSON:
    if req.rt.namespaced:
        require_namespace(store, req, req.name, creating=False)
    old = store.get(req.key())
    if old is None:
        raise _errors.not_found(req.rt.plural, req.rt.group, req.name)
    return old


def _check_names(req: Request, obj: JSON) -> None:
    name = (obj.get("metadata") or {}).get("name")
    if name and name != req.name:
        raise _errors.bad_request(
            f"the name of the object ({name}) does not match the name on the URL ({req.name})"
        )


def update(store: Store, req: Request) -> Response:
    """PUT of the object, its status or its scale."""
    opts = write_options(req, "UpdateOptions")
    obj = decode_body(req)
    if req.subresource == "scale":
        return _write_scale(store, req, opts, lambda _: obj)
    check_type(req, obj)
    _place(req, obj)
    _check_names(req, obj)
    with store.lock:
        old = _existing(store, req)
        given = obj["metadata"].get("resourceVersion")
        if not given:
            raise _invalid(
                req,
                req.name,
                [
                    _errors.Cause(
                        "FieldValueInvalid",
                        "Invalid value: 0x0: must be specified for an update",
                        "metadata.resourceVersion",
                    )
                ],
            )
        if str(given) != old["metadata"]["resourceVersion"]:
            raise _errors.conflict(req.rt.plural, req.rt.group, req.name)
        return _commit_update(store, req, opts, old, obj, Admission(req, opts))


def _commit_update(
    store: Store,
    req: Request,
    opts: WriteOptions,
    old: JSON,
    new: JSON,
    admission: Admission,
    applied: bool = False,
) -> Response:
    """The shared tail of PUT and PATCH: isolate, admit, validate, bump, store."""
    status_sub = req.version.status_subresource
    strategy = strategy_of(req.rt)
    old_view = present(old, req.rt, req.version.name)
    new = copy_json(new)
    new["apiVersion"], new["kind"] = req.api_version, req.rt.kind
    managed = (new.get("metadata") or {}).get("managedFields") if applied else None
    if req.subresource == "status":
        new = _meta.isolate_for_status(new, old_view)
    else:
        _meta.isolate_for_main(new, old_view, status_sub)
        _meta.copy_server_fields(new, old_view)
        new["metadata"]["name"] = req.name
        if req.rt.namespaced:
            new["metadata"]["namespace"] = req.namespace
        strategy.prepare_update(new, old_view)
    new, causes = admission(new)
    if applied:
        new["metadata"]["managedFields"] = managed
        if not managed:
            new["metadata"].pop("managedFields", None)
    else:  # before the webhooks: what they change is owned by no one
        _apply.record_update(
            old_view,
            new,
            opts.manager,
            req.api_version,
            req.subresource,
            status_sub,
            req.version.schema,
        )
    new, causes = _mutated(store, req, admission, (new, causes), old_view)
    if req.rt.builtin:
        causes += _meta.validate_meta_types(new)
    if req.subresource != "status":
        causes += strategy.validate_update(new, old_view)
    added = _meta.added_finalizers(new, old_view)
    if old["metadata"].get("deletionTimestamp") and added:
        causes.append(
            _errors.Cause(
                "FieldValueForbidden",
                "Forbidden: no new finalizers can be added if the object is being deleted, "
                f"found new finalizers {_meta.go_string_list(added)}",
                "metadata.finalizers",
            )
        )
    if causes:
        raise _invalid(req, req.name, causes)
    _validated(store, req, new, old_view)
    if strategy.generation and req.subresource != "status":
        _meta.bump_generation(new, old_view)
    new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
    if _meta.without_volatile(new) == _meta.without_volatile(old_view) and _apply.ownership(
        new
    ) == _apply.ownership(old_view):
        return Response(200, old_view, admission.warnings)  # no-op: no new resourceVersion
    finalizing = bool(old["metadata"].get("deletionTimestamp")) and not new["metadata"].get(
        "finalizers"
    )
    if opts.dry_run:
        return Response(200, new, admission.warnings)
    if finalizing:
        stored = store.commit(req.key(), None, last=to_storage(new, req.rt))
        if req.rt.namespaced:
            finalize_namespace(store, req.namespace)
    else:
        stored = store.commit(req.key(), to_storage(new, req.rt))
    out = present(stored, req.rt, req.version.name)
    if req.subresource == "scale":
        return Response(200, scale_view(req, out), admission.warnings)
    return Response(200, out, admission.warnings)


def patch(store: Store, req: Request) -> Response:
    """PATCH with a JSON merge patch, a JSON patch, or a server-side apply configuration."""
    content_type = req.content_type.split(";")[0].strip().lower()
    accepted = (*CR_PATCH_TYPES, STRATEGIC_PATCH) if req.rt.builtin else CR_PATCH_TYPES
    if content_type not in accepted:
        raise _errors.unsupported_media_type(content_type, accepted)
    strategic = content_type == STRATEGIC_PATCH
    applying = content_type == APPLY_PATCH
    opts = write_options(req, "PatchOptions")
    causes = []
    if applying and not req.param("fieldManager"):
        causes.append(
            _errors.Cause(
                "FieldValueRequired", "Required value: is required for apply patch", "fieldManager"
            )
        )
    if not applying and req.param("force") is not None:
        causes.append(
            _errors.Cause(
                "FieldValueForbidden",
                "Forbidden: may not be specified for non-apply patch",
                "force",
            )
        )
    if causes:
        raise _errors.invalid("PatchOptions", "meta.k8s.io", "", causes)
    if applying:
        return _apply_patch(store, req, opts)
    try:
        patch_doc = json.loads(req.body or b"null")
    except ValueError as exc:
        raise _errors.bad_request(f"error decoding patch: {exc}") from None

    def patched(current: JSON) -> JSON:
        try:
            if content_type == JSON_PATCH:
                out = apply_json_patch(current, patch_doc)
            elif strategic:
                schema = req.version.schema
                out = apply_strategic(current, patch_doc, compiled(schema) if schema else None)
            else:
                out = apply_merge_patch(current, patch_doc)
        except PatchError as exc:
            if exc.status_code == 400:
                raise _errors.bad_request(exc.message) from None
            raise _errors.ApiError(422, "Invalid", exc.message, {}) from None
        if not isinstance(out, dict):
            raise _errors.ApiError(422, "Invalid", "the patched object is not a JSON object", {})
        return out

    if req.subresource == "scale":
        return _write_scale(store, req, opts, patched)
    with store.lock:
        old = _existing(store, req)
        current = present(old, req.rt, req.version.name)
        new = patched(current)
        given = (new.get("metadata") or {}).get("resourceVersion")
        if given and str(given) != old["metadata"]["resourceVersion"]:
            raise _errors.conflict(req.rt.plural, req.rt.group, req.name)
        if not isinstance(new.get("metadata"), dict):
            new["metadata"] = {}
        return _commit_update(store, req, opts, old, new, Admission(req, opts, patching=True))


def _apply_body(body: bytes) -> object:
    """An apply patch: YAML, which clients almost always write as JSON.

    Why JSON first: PyYAML reads JSON in pure Python, about fifty times slower than the JSON
    parser (it was most of an apply's time here). Text that is a JSON object is read as JSON
    (JSON is YAML); anything else, or JSON that does not parse, as YAML, with libyaml's
    parser where PyYAML has it."""
    if body.lstrip()[:1] == b"{":
        try:
            return json.loads(body)
        except ValueError:
            pass  # YAML in flow style, or not valid at all: the YAML parser says which
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(body, Loader=loader)


def _apply_patch(store: Store, req: Request, opts: WriteOptions) -> Response:
    try:
        config = _apply_body(req.body or b"")
    except yaml.YAMLError as exc:
        raise _errors.bad_request(f"error decoding YAML: {exc}") from None
    if not isinstance(config, dict):
        raise _errors.bad_request("the apply patch must be a YAML or JSON object")
    check_type(req, config)
    _check_names(req, config)
    if not isinstance(config.get("metadata"), dict):
        raise _errors.bad_request("the apply configuration needs metadata.name")
    status_sub = req.version.status_subresource
    with store.lock:
        if req.rt.namespaced:
            require_namespace(store, req, req.name, creating=True)
        old = store.get(req.key())
        if old is None:
            if req.subresource:
                raise _errors.not_found(req.rt.plural, req.rt.group, req.name)
            base: JSON = {
                "apiVersion": req.api_version,
                "kind": req.rt.kind,
                "metadata": {"name": req.name},
            }
            merged = _apply.apply(
                base,
                config,
                opts.manager,
                req.api_version,
                opts.force,
                "",
                status_sub,
                req.version.schema,
            )
            return create(store, req, merged, applied=True)
        given = config["metadata"].get("resourceVersion")
        if given and str(given) != old["metadata"]["resourceVersion"]:
            raise _errors.conflict(req.rt.plural, req.rt.group, req.name)
        live = present(old, req.rt, req.version.name)
        merged = _apply.apply(
            live,
            config,
            opts.manager,
            req.api_version,
            opts.force,
            req.subresource,
            status_sub,
            req.version.schema,
        )
        admission = Admission(req, opts, patching=True)
        return _commit_update(store, req, opts, old, merged, admission, applied=True)


def _write_scale(store: Store, req: Request, opts: WriteOptions, change: Any) -> Response:
    """PUT/PATCH of /scale: edit the Scale view, write replicas back through the spec path."""
    spec = req.version.scale
    assert spec is not None
    with store.lock:
        old = _existing(store, req)
        view = scale_view(req, old)
        new_view = change(copy_json(view))
        given = (new_view.get("metadata") or {}).get("resourceVersion")
        if given and str(given) != old["metadata"]["resourceVersion"]:
            raise _errors.conflict(req.rt.plural, req.rt.group, req.name)
        replicas = read_path(new_view, ".spec.replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise _errors.invalid(
                "Scale",
                "autoscaling",
                req.name,
                [
                    _errors.Cause(
                        "FieldValueInvalid",
                        f"Invalid value: {json.dumps(replicas)}: must be greater than or equal "
                        "to 0",
                        "spec.replicas",
                    )
                ],
            )
        new = present(old, req.rt, req.version.name)
        node = new
        parts = spec.spec_replicas_path.lstrip(".").split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = replicas
        main = Request(req.method, req.rt, req.version, req.namespace, req.name, "scale", req.query)
        return _commit_update(store, main, opts, old, new, Admission(main, opts, patching=True))
