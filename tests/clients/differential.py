"""The client differential script: one list of operations, run through each client.

Each client (kubectl, the official dynamic client, lightkube, kr8s) gets an adapter that
performs the operations the way a user of that client would; the script is the same for all.
Each operation's outcome is what a user's code would branch on: success and the fields that
matter, or the failure's HTTP status and `reason`. Running the script against FakeCluster
and against a real kube-apiserver and comparing outcome by outcome is the differential test.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

JSON = dict[str, Any]

REASON_CODES = {
    "BadRequest": 400,
    "Unauthorized": 401,
    "Forbidden": 403,
    "NotFound": 404,
    "MethodNotAllowed": 405,
    "AlreadyExists": 409,
    "Conflict": 409,
    "Gone": 410,
    "Expired": 410,
    "UnsupportedMediaType": 415,
    "Invalid": 422,
    "InternalError": 500,
}


class Failure(Exception):
    """A failed request as a client reports it: HTTP status and the Status reason."""

    def __init__(self, code: int, reason: str, message: str = "") -> None:
        super().__init__(f"{code} {reason}: {message}")
        self.code, self.reason, self.message = code, reason, message


class Unsupported(Exception):
    """The client has no way to do this operation; it is left out of its tally."""


class Adapter(Protocol):
    """What the script needs from a client; each method raises `Failure` on an API error."""

    name: str

    def create(self, obj: JSON) -> JSON: ...
    def get(self, api_version: str, kind: str, name: str, namespace: str | None) -> JSON: ...
    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: str = ""
    ) -> list[JSON]: ...
    def replace(self, obj: JSON) -> JSON: ...
    def merge_patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, patch: JSON
    ) -> JSON: ...
    def strategic_patch(
        self, api_version: str, kind: str, name: str, namespace: str | None, patch: JSON
    ) -> JSON: ...
    def apply(self, obj: JSON, manager: str, force: bool = False) -> JSON: ...
    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None,
        policy: str | None = None,
    ) -> None: ...
    def can_i(self, verb: str, resource: str, namespace: str) -> bool: ...
    def client_apply(self, obj: JSON) -> JSON: ...
    def table(self, api_version: str, kind: str, namespace: str) -> JSON: ...
    def explain(self, path: str) -> list[str]: ...
    def set_image(
        self, kind: str, name: str, namespace: str, container: str, image: str
    ) -> None: ...


@dataclass(frozen=True)
class Outcome:
    """One operation's result: `ok` with fields, or the failure's code and reason."""

    op: str
    ok: bool | None  # None: the client cannot do it
    code: int
    reason: str
    fields: str  # canonical JSON of the fields that matter

    def __str__(self) -> str:
        return (
            f"{self.op}: ok {self.fields}" if self.ok else f"{self.op}: {self.code} {self.reason}"
        )


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


# -- the objects -------------------------------------------------------------------------


def configmap(ns: str, name: str, data: JSON, labels: JSON | None = None) -> JSON:
    meta: JSON = {"name": name, "namespace": ns, "labels": labels or {"diff": "yes"}}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def pod(ns: str, name: str, image: str = "busybox:1.36") -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"diff": "yes"}},
        "spec": {
            "containers": [
                {"name": "main", "image": image, "command": ["sleep", "3600"]},
                {"name": "side", "image": "busybox:1.36", "command": ["sleep", "3600"]},
            ],
        },
    }


def raycluster(ns: str, name: str) -> JSON:
    container = {
        "name": "ray-head",
        "image": "rayproject/ray:2.40.0",
        "resources": {"limits": {"cpu": "1", "memory": "2Gi"}},
    }
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": ns, "labels": {"diff": "yes"}},
        "spec": {
            "rayVersion": "2.40.0",
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [container]}},
            },
        },
    }


# -- the script --------------------------------------------------------------------------

Step = Callable[[Adapter, str], Any]


def _data(obj: JSON) -> JSON:
    meta = obj.get("metadata") or {}
    return {"data": obj.get("data"), "labels": meta.get("labels")}


def _names(items: list[JSON]) -> list[str]:
    return sorted(str((o.get("metadata") or {}).get("name")) for o in items)


def _images(obj: JSON) -> list[str]:
    return [str(c.get("image")) for c in (obj.get("spec") or {}).get("containers") or []]


def _stale(adapter: Adapter, ns: str) -> Any:
    current = adapter.get("v1", "ConfigMap", "cm1", ns)
    current["metadata"]["resourceVersion"] = "1"
    current["data"] = {"stale": "write"}
    return adapter.replace(current)


def _secret(adapter: Adapter, ns: str) -> Any:
    adapter.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s1", "namespace": ns},
            "stringData": {"user": "ray"},
        }
    )
    got = adapter.get("v1", "Secret", "s1", ns)
    return {"data": got.get("data"), "type": got.get("type")}


def _service(adapter: Adapter, ns: str) -> Any:
    obj = adapter.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "svc1", "namespace": ns},
            "spec": {"selector": {"app": "x"}, "ports": [{"name": "http", "port": 80}]},
        }
    )
    spec = obj.get("spec") or {}
    port = (spec.get("ports") or [{}])[0]
    return {
        "type": spec.get("type"),
        "port": [port.get("protocol"), port.get("targetPort")],
        "affinity": spec.get("sessionAffinity"),
        "ip": bool(spec.get("clusterIP")),
    }


def _pod_created(adapter: Adapter, ns: str) -> Any:
    obj = adapter.create(pod(ns, "p1"))
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return {
        "phase": status.get("phase"),
        "qos": status.get("qosClass"),
        "restart": spec.get("restartPolicy"),
        "pull": [c.get("imagePullPolicy") for c in spec.get("containers") or []],
    }


def _event(adapter: Adapter, ns: str) -> Any:
    adapter.create(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "p1.1", "namespace": ns},
            "involvedObject": {"kind": "Pod", "name": "p1", "namespace": ns},
            "reason": "Tested",
            "message": "made by the differential suite",
            "type": "Normal",
        }
    )
    return sorted((e.get("reason"), e.get("type")) for e in adapter.list("v1", "Event", ns))


def _apply_twice(adapter: Adapter, ns: str) -> Any:
    """Two managers apply identical values, list items included: no conflict."""
    adapter.apply(pod(ns, "p2"), "first")
    second = adapter.apply(pod(ns, "p2"), "second")
    fields = second["metadata"].get("managedFields") or []
    appliers = sorted(m.get("manager") for m in fields if m.get("operation") == "Apply")
    return {"images": _images(second), "appliers": appliers}


def _apply_conflict(adapter: Adapter, ns: str) -> Any:
    adapter.apply(configmap(ns, "cm2", {"k": "a"}), "first")
    return _data(adapter.apply(configmap(ns, "cm2", {"k": "b"}), "second"))


def _apply_force(adapter: Adapter, ns: str) -> Any:
    return _data(adapter.apply(configmap(ns, "cm2", {"k": "b"}), "second", force=True))


def _table_like(adapter: Adapter, ns: str) -> Any:
    return _names(adapter.list("v1", "Pod", ns, labels="diff=yes"))


def _client_apply_configmap(adapter: Adapter, ns: str) -> Any:
    adapter.client_apply(configmap(ns, "cm3", {"a": "1"}))
    return _data(adapter.client_apply(configmap(ns, "cm3", {"a": "2", "b": "3"})))


def _client_apply_pod(adapter: Adapter, ns: str) -> Any:
    adapter.client_apply(pod(ns, "p3"))
    return _images(adapter.client_apply(pod(ns, "p3", image="busybox:1.37")))


def _owned(ns: str, name: str, owner: JSON) -> JSON:
    child = configmap(ns, name, {"x": "1"})
    meta = owner["metadata"]
    child["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": meta["name"], "uid": meta["uid"]}
    ]
    return child


def _collected(adapter: Adapter, ns: str, policy: str | None) -> Any:
    owner = adapter.create(configmap(ns, f"owner-{policy or 'default'}".lower(), {"x": "1"}))
    child = f"child-{policy or 'default'}".lower()
    adapter.create(_owned(ns, child, owner))
    adapter.delete("v1", "ConfigMap", owner["metadata"]["name"], ns, policy)

    def gone(name: str) -> bool:
        try:
            adapter.get("v1", "ConfigMap", name, ns)
        except Failure as failure:
            return failure.code == 404
        return False

    collected = wait_for(lambda: gone(child) and gone(owner["metadata"]["name"]), 20.0)
    return {"collected": collected}


def _orphaned(adapter: Adapter, ns: str) -> Any:
    owner = adapter.create(configmap(ns, "owner-orphan", {"x": "1"}))
    adapter.create(_owned(ns, "child-orphan", owner))
    adapter.delete("v1", "ConfigMap", "owner-orphan", ns, "Orphan")

    def orphaned() -> bool:
        try:
            child = adapter.get("v1", "ConfigMap", "child-orphan", ns)
        except Failure:
            return False
        return not child["metadata"].get("ownerReferences")

    return {"orphaned": wait_for(orphaned, 20.0)}


def _events_v1(adapter: Adapter, ns: str) -> Any:
    found = adapter.list("events.k8s.io/v1", "Event", ns)
    own = [e.get("note") for e in found if e.get("reason") == "Tested"]
    return {
        "events": sorted(
            (e.get("reason"), e.get("reportingController"), (e.get("regarding") or {}).get("name"))
            for e in found
        ),
        "note": own,
    }


def _client_apply_raycluster(adapter: Adapter, ns: str) -> Any:
    adapter.client_apply(raycluster(ns, "rc3"))
    changed = raycluster(ns, "rc3")
    changed["spec"]["suspend"] = True
    done = adapter.client_apply(changed)
    return {"suspend": done["spec"].get("suspend"), "generation": done["metadata"]["generation"]}


def _set_image(adapter: Adapter, ns: str) -> Any:
    adapter.set_image("pod", "p1", ns, "side", "busybox:1.38")
    return _images(adapter.get("v1", "Pod", "p1", ns))


def _defaults_of_namespace(adapter: Adapter, ns: str) -> Any:
    def present() -> bool:
        try:
            adapter.get("v1", "ServiceAccount", "default", ns)
            adapter.get("v1", "ConfigMap", "kube-root-ca.crt", ns)
        except Failure:
            return False
        return True

    return {"present": wait_for(present, 20.0)}


SCRIPT: list[tuple[str, Step]] = [
    ("default service account and root CA", _defaults_of_namespace),
    ("create configmap", lambda a, ns: _data(a.create(configmap(ns, "cm1", {"a": "1"})))),
    ("create it again", lambda a, ns: a.create(configmap(ns, "cm1", {"a": "1"})) and None),
    ("get configmap", lambda a, ns: _data(a.get("v1", "ConfigMap", "cm1", ns))),
    ("get missing configmap", lambda a, ns: a.get("v1", "ConfigMap", "nope", ns) and None),
    (
        "list by label",
        lambda a, ns: _names(a.list("v1", "ConfigMap", ns, labels="diff=yes")),
    ),
    (
        "merge patch labels",
        lambda a, ns: _data(
            a.merge_patch("v1", "ConfigMap", "cm1", ns, {"metadata": {"labels": {"x": "y"}}})
        ),
    ),
    ("replace with stale resourceVersion", lambda a, ns: _stale(a, ns) and None),
    (
        "create with invalid name",
        lambda a, ns: a.create(configmap(ns, "Not_Valid", {"a": "1"})) and None,
    ),
    (
        "create with invalid data key",
        lambda a, ns: a.create(configmap(ns, "cm-bad", {"no spaces": "1"})) and None,
    ),
    ("secret from stringData", _secret),
    ("service defaults", _service),
    ("pod defaults", _pod_created),
    (
        "strategic merge: set one image",
        lambda a, ns: _images(
            a.strategic_patch(
                "v1",
                "Pod",
                "p1",
                ns,
                {"spec": {"containers": [{"name": "main", "image": "busybox:1.37"}]}},
            )
        ),
    ),
    (
        "change a pod's command",
        lambda a, ns: a.strategic_patch(
            "v1",
            "Pod",
            "p1",
            ns,
            {"spec": {"containers": [{"name": "main", "command": ["true"]}]}},
        )
        and None,
    ),
    ("event and list", _event),
    ("events through events.k8s.io", _events_v1),
    ("client-side apply of a ConfigMap, twice", _client_apply_configmap),
    ("client-side apply of a Pod, new image", _client_apply_pod),
    ("table of pods", lambda a, ns: a.table("v1", "Pod", ns)),
    ("delete owner: dependents collected", lambda a, ns: _collected(a, ns, None)),
    ("foreground delete", lambda a, ns: _collected(a, ns, "Foreground")),
    ("orphan delete", _orphaned),
    ("apply by two managers, same values", _apply_twice),
    ("apply a conflicting value", _apply_conflict),
    ("apply with force", _apply_force),
    ("list pods", _table_like),
    (
        "create RayCluster",
        lambda a, ns: (a.create(raycluster(ns, "rc1")).get("spec") or {}).get("rayVersion"),
    ),
    (
        "get RayCluster",
        lambda a, ns: (a.get("ray.io/v1", "RayCluster", "rc1", ns).get("metadata") or {}).get(
            "generation"
        ),
    ),
    (
        "merge patch RayCluster spec",
        lambda a, ns: (
            a.merge_patch("ray.io/v1", "RayCluster", "rc1", ns, {"spec": {"suspend": True}}).get(
                "metadata"
            )
            or {}
        ).get("generation"),
    ),
    (
        "strategic merge on a custom resource",
        lambda a, ns: a.strategic_patch(
            "ray.io/v1", "RayCluster", "rc1", ns, {"spec": {"suspend": False}}
        )
        and None,
    ),
    (
        "RayCluster with a wrong type",
        lambda a, ns: a.create(
            {**raycluster(ns, "rc2"), "spec": {"rayVersion": 2, "headGroupSpec": {}}}
        )
        and None,
    ),
    ("client-side apply of a RayCluster, changed", _client_apply_raycluster),
    ("set image", _set_image),
    ("explain raycluster.spec", lambda a, ns: a.explain("raycluster.spec")),
    ("list RayClusters", lambda a, ns: _names(a.list("ray.io/v1", "RayCluster", ns))),
    ("table of RayClusters", lambda a, ns: a.table("ray.io/v1", "RayCluster", ns)),
    ("delete configmap", lambda a, ns: a.delete("v1", "ConfigMap", "cm1", ns)),
    ("delete it again", lambda a, ns: a.delete("v1", "ConfigMap", "cm1", ns)),
    ("may I create pods", lambda a, ns: a.can_i("create", "pods", ns)),
    ("get namespace", lambda a, ns: (a.get("v1", "Namespace", ns, None).get("status") or {})),
]


def run(adapter: Adapter, namespace: str) -> list[Outcome]:
    """Run the script in a new namespace; the namespace is deleted afterwards."""
    adapter.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    outcomes = []
    try:
        for name, step in SCRIPT:
            try:
                value = step(adapter, namespace)
            except Unsupported:
                outcomes.append(Outcome(name, None, 0, "", ""))
            except Failure as failure:
                outcomes.append(Outcome(name, False, failure.code, failure.reason, ""))
            except Exception as exc:  # the client itself failed on what the server sent
                outcomes.append(Outcome(name, False, -1, f"client: {type(exc).__name__}", ""))
            else:
                outcomes.append(Outcome(name, True, 0, "", _canonical(value)))
    finally:
        with contextlib.suppress(Failure):
            adapter.delete("v1", "Namespace", namespace, None)
    return outcomes


def wait_for(check: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return False
