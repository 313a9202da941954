"""One adapter per client: the differential script's operations, each in the client's idiom.

- kubectl: the binary `make` placed in the virtualenv, one command per operation (`create
  -f -`, `get -o json`, `patch --type merge|strategic`, `apply --server-side`, `replace`,
  `delete`, `auth can-i`); a failure is read from `Error from server (<Reason>)`.
- dynamic: `kubernetes.dynamic.DynamicClient`, resources found through discovery.
- lightkube: `lightkube.Client` with its built-in models and generic resources for CRDs.
- kr8s: `kr8s.objects` (create, get, list, patch, delete) and `Api.call_api` for what kr8s
  has no method for (replace, server-side apply).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from differential import REASON_CODES, Failure, Unsupported

JSON = dict[str, Any]

SSAR = {
    "apiVersion": "authorization.k8s.io/v1",
    "kind": "SelfSubjectAccessReview",
}


def _ns(obj: JSON) -> str | None:
    return (obj.get("metadata") or {}).get("namespace")


def _name(obj: JSON) -> str:
    return str((obj.get("metadata") or {}).get("name"))


# -- kubectl -------------------------------------------------------------------------------

_SERVER_ERROR = re.compile(r"Error from server \((\w+)\)")
_RESPONSE = re.compile(r'"Response" verb="\w+" url="[^"]*" status="(\d+)')
_BY_CODE = {400: "BadRequest", 403: "Forbidden", 404: "NotFound", 415: "UnsupportedMediaType"}


def _failure(stderr: str) -> Failure:
    """What failed, from kubectl's `Error from server (Reason)` or the last response's status
    in its -v=6 log (kubectl words 422s and apply conflicts without the reason)."""
    codes = [int(c) for c in _RESPONSE.findall(stderr) if int(c) >= 400]
    code = codes[-1] if codes else 0
    message = "\n".join(line for line in stderr.splitlines() if not line.startswith("I1"))
    found = _SERVER_ERROR.search(stderr)
    if found:
        reason = found.group(1)
    elif code == 422:
        reason = "Invalid"
    elif code == 409:
        reason = "AlreadyExists" if "already exists" in message else "Conflict"
    else:
        reason = _BY_CODE.get(code, "ClientError")
    return Failure(code or REASON_CODES.get(reason, 0), reason, message.strip())


class Kubectl:
    name = "kubectl"

    def __init__(self, binary: Path, kubeconfig: Path) -> None:
        self.binary, self.kubeconfig = binary, kubeconfig

    def _run(self, *args: str, stdin: JSON | None = None) -> str:
        done = subprocess.run(
            [str(self.binary), "--kubeconfig", str(self.kubeconfig), "-v=6", *args],
            input=json.dumps(stdin) if stdin is not None else None,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "KUBECONFIG": str(self.kubeconfig)},
        )
        if done.returncode != 0:
            raise _failure(done.stderr)
        return done.stdout

    def _json(self, *args: str, stdin: JSON | None = None) -> JSON:
        out: JSON = json.loads(self._run(*args, "-o", "json", stdin=stdin))
        return out

    @staticmethod
    def _type(api_version: str, kind: str) -> str:
        group = api_version.rpartition("/")[0]
        version = api_version.rpartition("/")[2]
        return f"{kind}.{version}.{group}" if group else kind

    def _where(self, namespace: str | None) -> list[str]:
        return ["-n", namespace] if namespace else []

    def create(self, obj: JSON) -> JSON:
        return self._json("create", "-f", "-", stdin=obj)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None) -> JSON:
        return self._json("get", self._type(api_version, kind), name, *self._where(namespace))

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: str = ""
    ) -> list[JSON]:
        extra = ["-l", labels] if labels else []
        body = self._json("get", self._type(api_version, kind), *self._where(namespace), *extra)
        items: list[JSON] = body.get("items") or []
        return items

    def replace(self, obj: JSON) -> JSON:
        return self._json("replace", "-f", "-", stdin=obj)

    def merge_patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, patch: JSON
    ) -> JSON:
        return self._json(
            "patch",
            self._type(api_version, kind),
            name,
            *self._where(namespace),
            "--type",
            "merge",
            "-p",
            json.dumps(patch),
        )

    def strategic_patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, patch: JSON
    ) -> JSON:
        return self._json(
            "patch",
            self._type(api_version, kind),
            name,
            *self._where(namespace),
            "--type",
            "strategic",
            "-p",
            json.dumps(patch),
        )

    def apply(self, obj: JSON, manager: str, force: bool = False) -> JSON:
        args = ["apply", "--server-side", f"--field-manager={manager}", "-f", "-"]
        if force:
            args.append("--force-conflicts")
        return self._json(*args, "--show-managed-fields", stdin=obj)

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
        policy: str | None = None,
    ) -> None:
        cascade = [f"--cascade={policy.lower()}"] if policy else []
        self._run(
            "delete",
            self._type(api_version, kind),
            name,
            *self._where(namespace),
            "--wait=false",
            *cascade,
        )

    def client_apply(self, obj: JSON) -> JSON:
        return self._json("apply", "-f", "-", stdin=obj)

    def explain(self, path: str) -> list[str]:
        return [line.rstrip() for line in self._run("explain", path).splitlines()]

    def set_image(self, kind: str, name: str, namespace: str, container: str, image: str) -> None:
        self._run("set", "image", f"{kind}/{name}", f"{container}={image}", "-n", namespace)

    def table(self, api_version: str, kind: str, namespace: str) -> JSON:
        text = self._run("get", self._type(api_version, kind), "-n", namespace, "-o", "wide")
        lines = [line for line in text.splitlines() if line.strip()]
        columns = re.split(r"\s{2,}", lines[0].strip()) if lines else []
        return {"columns": columns, "rows": max(0, len(lines) - 1)}

    def can_i(self, verb: str, resource: str, namespace: str) -> bool:
        try:
            return self._run("auth", "can-i", verb, resource, "-n", namespace).strip() == "yes"
        except Failure as failure:
            if "no" in failure.message.split():
                return False
            raise


# -- the official dynamic client -------------------------------------------------------------


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
        from kubernetes.dynamic.exceptions import DynamicApiError

        try:
            return fn(*args, **kwargs)
        except DynamicApiError as exc:
            try:
                status = json.loads(exc.body)
            except (TypeError, ValueError):
                status = {}
            raise Failure(int(exc.status), str(status.get("reason", "")), str(exc)) from None

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
        return self._patch(
            api_version, kind, name, namespace, patch, "application/merge-patch+json"
        )

    def strategic_patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, patch: JSON
    ) -> JSON:
        return self._patch(
            api_version, kind, name, namespace, patch, "application/strategic-merge-patch+json"
        )

    def apply(self, obj: JSON, manager: str, force: bool = False) -> JSON:
        res = self._resource(obj["apiVersion"], obj["kind"])
        return self._dict(
            self._call(
                res.server_side_apply,
                body=obj,
                name=_name(obj),
                namespace=_ns(obj),
                field_manager=manager,
                force_conflicts=force,
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
        res = self._resource(api_version, kind)
        body = {"propagationPolicy": policy} if policy else None
        self._call(res.delete, name=name, namespace=namespace, body=body)

    def client_apply(self, obj: JSON) -> JSON:
        raise Unsupported("the dynamic client has no client-side apply")

    def table(self, api_version: str, kind: str, namespace: str) -> JSON:
        res = self._resource(api_version, kind)
        accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
        found = self._dict(
            self._call(res.get, namespace=namespace, header_params={"Accept": accept})
        )
        columns = [c["name"].upper() for c in found.get("columnDefinitions") or []]
        return {"columns": columns, "rows": len(found.get("rows") or [])}

    def can_i(self, verb: str, resource: str, namespace: str) -> bool:
        res = self._resource("authorization.k8s.io/v1", "SelfSubjectAccessReview")
        body = {
            **SSAR,
            "spec": {
                "resourceAttributes": {"verb": verb, "resource": resource, "namespace": namespace}
            },
        }
        return bool(self._dict(self._call(res.create, body=body)).get("status", {}).get("allowed"))

    # -- lightkube -----------------------------------------------------------------------------

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
            raise Failure(
                int(exc.status.code or 0), str(exc.status.reason or ""), str(exc)
            ) from None

    @staticmethod
    def _kind(api_version: str, kind: str) -> Any:
        from lightkube.core.exceptions import LoadResourceError
        from lightkube.core.resource_registry import resource_registry
        from lightkube.generic_resource import create_namespaced_resource

        try:
            return resource_registry.load(api_version, kind)
        except LoadResourceError:
            pass  # a custom resource: users declare it as a generic resource
        group, _, version = api_version.rpartition("/")
        plural = kind.lower() + "s"
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
        return [
            self._dict(o)
            for o in self._call(
                lambda: list(self.client.list(res, namespace=namespace, labels=selector))
            )
        ]

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

    def apply(self, obj: JSON, manager: str, force: bool = False) -> JSON:
        return self._dict(
            self._call(self.client.apply, self._object(obj), field_manager=manager, force=force)
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
        self._call(
            self.client.delete,
            self._kind(api_version, kind),
            name,
            namespace=namespace,
            cascade=cascade,
        )

    def client_apply(self, obj: JSON) -> JSON:
        raise Unsupported("lightkube has no client-side apply")

    def table(self, api_version: str, kind: str, namespace: str) -> JSON:
        raise Unsupported("lightkube does not ask for tables")

    def can_i(self, verb: str, resource: str, namespace: str) -> bool:
        from lightkube.models.authorization_v1 import (
            ResourceAttributes,
            SelfSubjectAccessReviewSpec,
        )
        from lightkube.resources.authorization_v1 import SelfSubjectAccessReview

        review = SelfSubjectAccessReview(
            spec=SelfSubjectAccessReviewSpec(
                resourceAttributes=ResourceAttributes(
                    verb=verb, resource=resource, namespace=namespace
                )
            )
        )
        answer = self._call(self.client.create, review)
        return bool(answer.status.allowed)

    # -- kr8s ----------------------------------------------------------------------------------

    def explain(self, path: str) -> list[str]:
        raise Unsupported("only kubectl explains")

    def set_image(self, kind: str, name: str, namespace: str, container: str, image: str) -> None:
        raise Unsupported("only kubectl has set image")


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
            status: Any = exc.status if isinstance(exc.status, dict) else {}
            code = exc.response.status_code if exc.response is not None else 0
            raise Failure(
                int(status.get("code") or code), str(status.get("reason", "")), str(exc)
            ) from None

    def _object(self, obj: JSON) -> Any:
        from kr8s.objects import object_from_spec

        return object_from_spec(obj, api=self.api, allow_unknown_type=True)

    @staticmethod
    def _kind(api_version: str, kind: str) -> str:
        group = api_version.rpartition("/")[0]
        return f"{kind.lower()}s.{group}" if group else kind.lower() + "s"

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
        found = self._call(
            lambda: list(
                self.api.get(
                    self._kind(api_version, kind),
                    namespace=namespace,
                    label_selector=labels or None,
                )
            )
        )
        return [o.raw for o in found]

    def _url(
        self, api_version: str, kind: str, name: str, namespace: str | None
    ) -> tuple[str, str, str]:
        group, _, version = api_version.rpartition("/")
        base = f"/apis/{group}" if group else ""
        url = f"{kind.lower()}s/{name}"
        return base, version if group else api_version, url

    def _request(self, method: str, obj: JSON, **kwargs: Any) -> JSON:
        """A raw request through kr8s' own connection (its `call_api`, run on kr8s' loop)."""
        from kr8s._async_utils import Portal

        base, version, url = self._url(obj["apiVersion"], obj["kind"], _name(obj), _ns(obj))

        async def call() -> JSON:
            async with self.api.call_api(
                method, version=version, base=base, namespace=_ns(obj), url=url, **kwargs
            ) as response:
                out: JSON = response.json()
                return out

        result: JSON = self._call(Portal().call, call)
        return result

    def replace(self, obj: JSON) -> JSON:
        return self._request("PUT", obj, content=json.dumps(obj))

    def _patch(
        self, api_version: str, kind: str, name: str, ns: str | None, patch: JSON, how: str
    ) -> JSON:
        found = self._object(
            {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": ns}}
        )
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

    def apply(self, obj: JSON, manager: str, force: bool = False) -> JSON:
        params = {"fieldManager": manager}
        if force:
            params["force"] = "true"
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
        found = self._object(
            {
                "apiVersion": api_version,
                "kind": kind,
                "metadata": {"name": name, "namespace": namespace},
            }
        )
        self._call(found.delete, propagation_policy=policy)

    def client_apply(self, obj: JSON) -> JSON:
        raise Unsupported("kr8s has no client-side apply")

    def table(self, api_version: str, kind: str, namespace: str) -> JSON:
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

    def explain(self, path: str) -> list[str]:
        raise Unsupported("only kubectl explains")

    def set_image(self, kind: str, name: str, namespace: str, container: str, image: str) -> None:
        raise Unsupported("only kubectl has set image")
