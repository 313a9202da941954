"""The Python clients' adapters: the script's operations, each in the client's idiom.

- dynamic: `kubernetes.dynamic.DynamicClient`, resources found through discovery; it has no
  wait, so a wait polls as its users do.
- lightkube: `lightkube.Client` with its built-in models and generic resources for CRDs.
- kr8s: `kr8s.objects` (create, get, list, patch, delete, wait) and `Api.call_api` for what
  kr8s has no method for (replace, server-side apply).

What a client cannot express raises `Unsupported` (the operation is left out of its tally);
what it does not show its users (lightkube's and kr8s' delete answers) is returned as None.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

from differential import Failure, Unsupported, wait_for

JSON = dict[str, Any]
WAIT_SECONDS = 60.0

SSAR = {
    "apiVersion": "authorization.k8s.io/v1",
    "kind": "SelfSubjectAccessReview",
}


def _ns(obj: JSON) -> str | None:
    return (obj.get("metadata") or {}).get("namespace")


def _name(obj: JSON) -> str:
    return str((obj.get("metadata") or {}).get("name"))


def condition_holds(obj: JSON | None, condition: str) -> bool:
    """A kubectl-style `--for` condition (`condition=Type`, `jsonpath={.a.b}=value`,
    `delete`) checked the plain way: the condition's status is True / the value is there."""
    if condition == "delete":
        return obj is None
    if obj is None:
        return False
    what, _, wanted = condition.partition("=")
    if what == "condition":
        conditions = (obj.get("status") or {}).get("conditions") or []
        return any(c.get("type") == wanted and c.get("status") == "True" for c in conditions)
    path, _, value = wanted.rpartition("=")
    node: Any = obj
    for part in path.strip("{}").strip(".").split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return str(node) == value


class Dynamic:
    name = "dynamic"

    def __init__(self, kubeconfig: Path) -> None:
        from kubernetes import client, config, dynamic

        configuration = client.Configuration()
        config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
        self.api = client.ApiClient(configuration)
        self.client = dynamic.DynamicClient(self.api)

    def close(self) -> None:
        self.api.close()

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        from kubernetes.client import ApiException
        from kubernetes.dynamic.exceptions import DynamicApiError

        try:
            return fn(*args, **kwargs)
        except DynamicApiError as exc:
            try:
                status = json.loads(exc.body)
            except (TypeError, ValueError):
                status = None
            raise Failure.from_status(status, int(exc.status), str(exc)) from None
        except ApiException as exc:  # a watch's ERROR event: "<reason>: <message>"
            reason, _, message = str(exc.reason or "").partition(": ")
            raise Failure(int(exc.status or 0), reason, message) from None

    def _resource(self, api_version: str, kind: str) -> Any:
        return self.client.resources.get(api_version=api_version, kind=kind)

    @staticmethod
    def _dict(obj: Any) -> JSON:
        out: JSON = obj.to_dict()
        return out

    def create(self, obj: JSON) -> JSON:
        res = self._resource(obj["apiVersion"], obj["kind"])
        return self._dict(self._call(res.create, body=obj, namespace=_ns(obj)))

    def get(self, api_version: str, kind: str, name: str, namespace: str | None) -> JSON:
        res = self._resource(api_version, kind)
        return self._dict(self._call(res.get, name=name, namespace=namespace))

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: str = ""
    ) -> list[JSON]:
        res = self._resource(api_version, kind)
        found = self._call(res.get, namespace=namespace, label_selector=labels or None)
        items: list[JSON] = self._dict(found).get("items") or []
        return items

    def replace(self, obj: JSON) -> JSON:
        res = self._resource(obj["apiVersion"], obj["kind"])
        return self._dict(self._call(res.replace, body=obj, namespace=_ns(obj)))

    def _patch(
        self, api_version: str, kind: str, name: str, ns: str | None, patch: JSON, kind_of: str
    ) -> JSON:
        res = self._resource(api_version, kind)
        return self._dict(
            self._call(res.patch, body=patch, name=name, namespace=ns, content_type=kind_of)
        )

    def merge_patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, patch: JSON
    ) -> JSON:
        merge = "application/merge-patch+json"
        return self._patch(api_version, kind, name, namespace, patch, merge)

    def strategic_patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, patch: JSON
    ) -> JSON:
        strategic = "application/strategic-merge-patch+json"
        return self._patch(api_version, kind, name, namespace, patch, strategic)

    def apply(self, obj: JSON, manager: str, force: bool = False, dry_run: bool = False) -> JSON:
        res = self._resource(obj["apiVersion"], obj["kind"])
        extra = {"dry_run": "All"} if dry_run else {}
        return self._dict(
            self._call(
                res.server_side_apply,
                body=obj,
                name=_name(obj),
                namespace=_ns(obj),
                field_manager=manager,
                force_conflicts=force,
                **extra,
            )
        )

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
        policy: str | None = None,
    ) -> JSON | None:
        res = self._resource(api_version, kind)
        body = {"propagationPolicy": policy} if policy else None
        return self._dict(self._call(res.delete, name=name, namespace=namespace, body=body))

    def client_apply(self, obj: JSON) -> JSON:
        raise Unsupported("the dynamic client has no client-side apply")

    def diff(self, obj: JSON, server_side: bool, manager: str = "") -> JSON:
        raise Unsupported("only kubectl diffs")

    def table(self, api_version: str, kind: str, namespace: str | None, name: str = "") -> JSON:
        res = self._resource(api_version, kind)
        accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
        found = self._dict(
            self._call(
                res.get, name=name or None, namespace=namespace, header_params={"Accept": accept}
            )
        )
        columns = [c["name"].upper() for c in found.get("columnDefinitions") or []]
        return {"columns": columns, "rows": [r.get("cells") for r in found.get("rows") or []]}

    def can_i(self, verb: str, resource: str, namespace: str) -> bool:
        res = self._resource("authorization.k8s.io/v1", "SelfSubjectAccessReview")
        attributes = {"verb": verb, "resource": resource, "namespace": namespace}
        body = {**SSAR, "spec": {"resourceAttributes": attributes}}
        return bool(self._dict(self._call(res.create, body=body)).get("status", {}).get("allowed"))

    def wait(
        self, api_version: str, kind: str, name: str, namespace: str | None, condition: str
    ) -> bool:
        def current() -> JSON | None:
            try:
                return self.get(api_version, kind, name, namespace)
            except Failure as failure:
                if failure.code == 404:
                    return None
                raise

        return bool(wait_for(lambda: condition_holds(current(), condition), WAIT_SECONDS))

    def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str,
        resource_version: str,
        seconds: int,
        bookmarks: bool = False,
        events: int = 0,
    ) -> list[JSON]:
        res = self._resource(api_version, kind)

        def collect() -> list[JSON]:
            out = []
            for event in self.client.watch(
                res,
                namespace=namespace,
                resource_version=resource_version,
                timeout=seconds,
                allow_watch_bookmarks=bookmarks or None,
            ):
                out.append({"type": event["type"], "object": event["raw_object"]})
            return out

        found: list[JSON] = self._call(collect)
        return found

    def watch_table(self, *args: Any) -> JSON:
        raise Unsupported("only kubectl prints watched tables")

    def explain(self, path: str) -> list[str]:
        raise Unsupported("only kubectl explains")

    def set_image(self, kind: str, name: str, namespace: str, container: str, image: str) -> None:
        raise Unsupported("only kubectl has set image")


class Lightkube:
    name = "lightkube"

    def __init__(self, kubeconfig: Path) -> None:
        import lightkube

        self.client = lightkube.Client(lightkube.KubeConfig.from_file(str(kubeconfig)))

    def close(self) -> None:
        self.client.close()

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        from lightkube import ApiError

        try:
            return fn(*args, **kwargs)
        except ApiError as exc:
            raise Failure.from_status(exc.status.to_dict(), 0, str(exc)) from None

    @staticmethod
    def _kind(api_version: str, kind: str) -> Any:
        from lightkube.core.exceptions import LoadResourceError
        from lightkube.core.resource_registry import resource_registry
        from lightkube.generic_resource import (
            create_global_resource,
            create_namespaced_resource,
        )

        try:
            return resource_registry.load(api_version, kind)
        except LoadResourceError:
            pass  # a custom resource: users declare it as a generic resource
        group, _, version = api_version.rpartition("/")
        plural = kind.lower() + "s"
        if kind in ("ClusterQueue", "ResourceFlavor"):
            return create_global_resource(group, version, kind, plural)
        return create_namespaced_resource(group, version, kind, plural)

    @staticmethod
    def _object(obj: JSON) -> Any:
        from lightkube import codecs

        Lightkube._kind(obj["apiVersion"], obj["kind"])
        return codecs.from_dict(obj)

    @staticmethod
    def _dict(obj: Any) -> JSON:
        out: JSON = obj.to_dict()
        return out

    def create(self, obj: JSON) -> JSON:
        return self._dict(self._call(self.client.create, self._object(obj)))

    def get(self, api_version: str, kind: str, name: str, namespace: str | None) -> JSON:
        res = self._kind(api_version, kind)
        return self._dict(self._call(self.client.get, res, name, namespace=namespace))

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: str = ""
    ) -> list[JSON]:
        res = self._kind(api_version, kind)
        selector = dict(p.split("=", 1) for p in labels.split(",")) if labels else None
        found = self._call(
            lambda: list(self.client.list(res, namespace=namespace, labels=selector))
        )
        return [self._dict(o) for o in found]

    def replace(self, obj: JSON) -> JSON:
        return self._dict(self._call(self.client.replace, self._object(obj)))

    def _patch(
        self, api_version: str, kind: str, name: str, ns: str | None, patch: JSON, how: Any
    ) -> JSON:
        res = self._kind(api_version, kind)
        return self._dict(
            self._call(self.client.patch, res, name, patch, namespace=ns, patch_type=how)
        )

    def merge_patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, patch: JSON
    ) -> JSON:
        from lightkube.types import PatchType

        return self._patch(api_version, kind, name, namespace, patch, PatchType.MERGE)

    def strategic_patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, patch: JSON
    ) -> JSON:
        from lightkube.types import PatchType

        return self._patch(api_version, kind, name, namespace, patch, PatchType.STRATEGIC)

    def apply(self, obj: JSON, manager: str, force: bool = False, dry_run: bool = False) -> JSON:
        return self._dict(
            self._call(
                self.client.apply,
                self._object(obj),
                field_manager=manager,
                force=force,
                dry_run=dry_run,
            )
        )

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
        policy: str | None = None,
    ) -> None:
        from lightkube.types import CascadeType

        cascade = CascadeType[policy.upper()] if policy else CascadeType.BACKGROUND
        res = self._kind(api_version, kind)
        self._call(self.client.delete, res, name, namespace=namespace, cascade=cascade)

    def client_apply(self, obj: JSON) -> JSON:
        raise Unsupported("lightkube has no client-side apply")

    def diff(self, obj: JSON, server_side: bool, manager: str = "") -> JSON:
        raise Unsupported("only kubectl diffs")

    def table(self, api_version: str, kind: str, namespace: str | None, name: str = "") -> JSON:
        raise Unsupported("lightkube does not ask for tables")

    def can_i(self, verb: str, resource: str, namespace: str) -> bool:
        from lightkube.models.authorization_v1 import (
            ResourceAttributes,
            SelfSubjectAccessReviewSpec,
        )
        from lightkube.resources.authorization_v1 import SelfSubjectAccessReview

        attributes = ResourceAttributes(verb=verb, resource=resource, namespace=namespace)
        review = SelfSubjectAccessReview(
            spec=SelfSubjectAccessReviewSpec(resourceAttributes=attributes)
        )
        answer = self._call(self.client.create, review)
        return bool(answer.status.allowed)

    def wait(
        self, api_version: str, kind: str, name: str, namespace: str | None, condition: str
    ) -> bool:
        """`Client.wait(for_conditions=...)` for a condition; otherwise the client has no
        wait, and its users poll."""
        res = self._kind(api_version, kind)
        what, _, wanted = condition.partition("=")
        if what != "condition":

            def current() -> JSON | None:
                try:
                    return self.get(api_version, kind, name, namespace)
                except Failure as failure:
                    if failure.code == 404:
                        return None
                    raise

            return bool(wait_for(lambda: condition_holds(current(), condition), WAIT_SECONDS))

        def waited() -> bool:
            self.client.wait(res, name, for_conditions=[wanted], namespace=namespace)
            return True

        return bool(self._call(_bounded, waited, WAIT_SECONDS, False))

    def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str,
        resource_version: str,
        seconds: int,
        bookmarks: bool = False,
        events: int = 0,
    ) -> list[JSON]:
        """lightkube's watch reconnects when the server ends it: it stops after `events`
        events, or after `seconds`."""
        if bookmarks:
            raise Unsupported("lightkube does not ask for bookmarks")
        res = self._kind(api_version, kind)
        out: list[JSON] = []

        def collect() -> list[JSON]:
            for kind_of, obj in self.client.watch(
                res, namespace=namespace, resource_version=resource_version, server_timeout=seconds
            ):
                out.append({"type": kind_of, "object": self._dict(obj)})
                if len(out) >= events:
                    break
            return out

        self._call(_bounded, collect, seconds + 5.0, None)
        return out

    def watch_table(self, *args: Any) -> JSON:
        raise Unsupported("only kubectl prints watched tables")

    def explain(self, path: str) -> list[str]:
        raise Unsupported("only kubectl explains")

    def set_image(self, kind: str, name: str, namespace: str, container: str, image: str) -> None:
        raise Unsupported("only kubectl has set image")


def _bounded(fn: Any, seconds: float, otherwise: Any) -> Any:
    """`fn()` in a thread of its own; `otherwise` when it has not returned within `seconds`
    (the thread, blocked on a read, ends with the client's connection)."""
    import concurrent.futures

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(fn).result(timeout=seconds)
    except concurrent.futures.TimeoutError:
        return otherwise
    finally:
        pool.shutdown(wait=False)


class Kr8s:
    name = "kr8s"

    def __init__(self, kubeconfig: Path) -> None:
        import kr8s

        self.api = kr8s.api(kubeconfig=str(kubeconfig))

    def close(self) -> None:
        pass

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        from kr8s import NotFoundError, ServerError

        try:
            return fn(*args, **kwargs)
        except NotFoundError as exc:
            raise Failure(404, "NotFound", str(exc)) from None
        except ServerError as exc:
            code = exc.response.status_code if exc.response is not None else 0
            raise Failure.from_status(exc.status, code, str(exc)) from None

    def _object(self, obj: JSON) -> Any:
        from kr8s.objects import object_from_spec

        return object_from_spec(obj, api=self.api, allow_unknown_type=True)

    @staticmethod
    def _kind(api_version: str, kind: str) -> str:
        group = api_version.rpartition("/")[0]
        return f"{kind.lower()}s.{group}" if group else kind.lower() + "s"

    def _portal(self, coroutine: Any) -> Any:
        from kr8s._async_utils import Portal

        return self._call(Portal().call, coroutine)

    def create(self, obj: JSON) -> JSON:
        made = self._object(obj)
        self._call(made.create)
        out: JSON = made.raw
        return out

    def get(self, api_version: str, kind: str, name: str, namespace: str | None) -> JSON:
        found = self._call(
            lambda: list(self.api.get(self._kind(api_version, kind), name, namespace=namespace))
        )
        if not found:
            raise Failure(404, "NotFound")
        out: JSON = found[0].raw
        return out

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: str = ""
    ) -> list[JSON]:
        kind_of = self._kind(api_version, kind)
        found = self._call(
            lambda: list(self.api.get(kind_of, namespace=namespace, label_selector=labels or None))
        )
        return [o.raw for o in found]

    @staticmethod
    def _url(obj: JSON) -> tuple[str, str, str]:
        group, _, version = obj["apiVersion"].rpartition("/")
        base = f"/apis/{group}" if group else ""
        return base, version, f"{obj['kind'].lower()}s/{_name(obj)}"

    def _request(self, method: str, obj: JSON, **kwargs: Any) -> JSON:
        """A raw request through kr8s' own connection (its `call_api`, run on kr8s' loop)."""
        base, version, url = self._url(obj)

        async def call() -> JSON:
            async with self.api.call_api(
                method, version=version, base=base, namespace=_ns(obj), url=url, **kwargs
            ) as response:
                out: JSON = response.json()
                return out

        result: JSON = self._portal(call)
        return result

    def replace(self, obj: JSON) -> JSON:
        return self._request("PUT", obj, content=json.dumps(obj))

    def _patch(
        self, api_version: str, kind: str, name: str, ns: str | None, patch: JSON, how: str
    ) -> JSON:
        meta = {"name": name, "namespace": ns}
        found = self._object({"apiVersion": api_version, "kind": kind, "metadata": meta})
        self._call(found.patch, patch, type=how)
        out: JSON = found.raw
        return out

    def merge_patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, patch: JSON
    ) -> JSON:
        return self._patch(api_version, kind, name, namespace, patch, "merge")

    def strategic_patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, patch: JSON
    ) -> JSON:
        return self._patch(api_version, kind, name, namespace, patch, "strategic")

    def apply(self, obj: JSON, manager: str, force: bool = False, dry_run: bool = False) -> JSON:
        params = {"fieldManager": manager}
        if force:
            params["force"] = "true"
        if dry_run:
            params["dryRun"] = "All"
        return self._request(
            "PATCH",
            obj,
            params=params,
            content=json.dumps(obj),
            headers={"Content-Type": "application/apply-patch+yaml"},
        )

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
        policy: str | None = None,
    ) -> None:
        meta = {"name": name, "namespace": namespace}
        found = self._object({"apiVersion": api_version, "kind": kind, "metadata": meta})
        self._call(found.delete, propagation_policy=policy)

    def client_apply(self, obj: JSON) -> JSON:
        raise Unsupported("kr8s has no client-side apply")

    def diff(self, obj: JSON, server_side: bool, manager: str = "") -> JSON:
        raise Unsupported("only kubectl diffs")

    def table(self, api_version: str, kind: str, namespace: str | None, name: str = "") -> JSON:
        raise Unsupported("kr8s does not ask for tables")

    def can_i(self, verb: str, resource: str, namespace: str) -> bool:
        from kr8s.objects import new_class

        review_class = new_class(
            "SelfSubjectAccessReview", "authorization.k8s.io/v1", namespaced=False
        )
        attributes = {"verb": verb, "resource": resource, "namespace": namespace}
        review = review_class({**SSAR, "spec": {"resourceAttributes": attributes}}, api=self.api)
        self._call(review.create)
        return bool(review.raw.get("status", {}).get("allowed"))

    def wait(
        self, api_version: str, kind: str, name: str, namespace: str | None, condition: str
    ) -> bool:
        """`APIObject.wait(...)`, kr8s' generic wait on conditions, jsonpaths and deletion."""
        meta = {"name": name, "namespace": namespace}
        found = self._object({"apiVersion": api_version, "kind": kind, "metadata": meta})
        if condition.startswith("jsonpath={"):  # kr8s spells kubectl's jsonpath= quoted
            expression, _, value = condition[len("jsonpath=") :].rpartition("=")
            condition = f"jsonpath='{expression}'={value}"
        try:
            self._call(found.wait, condition, timeout=WAIT_SECONDS)
        except TimeoutError:
            return False
        return True

    def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str,
        resource_version: str,
        seconds: int,
        bookmarks: bool = False,
        events: int = 0,
    ) -> list[JSON]:
        """kr8s' watch starts again after each end (and after a 410): it stops after `events`
        events, or after `seconds`."""
        if bookmarks:
            raise Unsupported("kr8s does not ask for bookmarks")
        kind_of = self._kind(api_version, kind)
        out: list[JSON] = []

        async def collect() -> None:
            async for kind_seen, obj in self.api.async_watch(
                kind_of, namespace=namespace, since=resource_version
            ):
                out.append({"type": kind_seen, "object": obj.raw})
                if len(out) >= events:
                    return

        async def bounded() -> None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(collect(), timeout=seconds)

        self._portal(bounded)
        return out

    def watch_table(self, *args: Any) -> JSON:
        raise Unsupported("only kubectl prints watched tables")

    def explain(self, path: str) -> list[str]:
        raise Unsupported("only kubectl explains")

    def set_image(self, kind: str, name: str, namespace: str, container: str, image: str) -> None:
        raise Unsupported("only kubectl has set image")
