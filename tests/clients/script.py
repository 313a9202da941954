"""The differential script: one list of operations, run through each client in order.

Built-in kinds first (CRUD, conflicts, validation, patches, client-side and server-side apply,
garbage collection, tables, watches), then what users do daily with the operators' kinds:
apply a RayCluster twice, diff it, apply it as a second manager and take it over, wait until
it is ready, watch, delete and check it is gone; Kueue's queues (what its webhooks rewrite,
its finalizers, waiting for `Active` after a change); a RayJob and a TrainJob.

A step returns what a user would look at: the object the server answered (whole; for kinds
an operator reconciles without its status, which the operator writes at its own pace and the
waits compare), a list, a table, events. Steps never ask which backend they run on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import objects as o
from differential import JSON, Adapter, Failure, wait_for

RAY = "ray.io/v1"
TRAINER = "trainer.kubeflow.org/v1alpha1"
#: Trainer's own ClusterTrainingRuntime (on the control plane from the operator's install, on
#: FakeCluster from the same release's install).
RUNTIME = "torch-distributed"


@dataclass
class Run:
    """One client's run of the script: its namespace and the suffix of its cluster-scoped
    names (both masked when outcomes are compared), and what earlier steps left."""

    adapter: Adapter
    run_id: str
    kept: dict[str, Any] = field(default_factory=dict)

    @property
    def ns(self) -> str:
        return f"diff-{self.adapter.name}-{self.run_id}"

    def cluster_name(self, base: str) -> str:
        return f"{base}-{self.run_id}"


Step = Callable[[Run], Any]


# -- what is compared ----------------------------------------------------------------------


def own(obj: JSON | None) -> JSON | None:
    """An object without what its operator writes on its own schedule: `status` and the
    managedFields entries of the status subresource."""
    if obj is None:
        return None
    out = {k: v for k, v in obj.items() if k != "status"}
    meta = dict(out.get("metadata") or {})
    if "managedFields" in meta:
        meta["managedFields"] = [
            m for m in meta["managedFields"] or [] if m.get("subresource") != "status"
        ]
    out["metadata"] = meta
    return out


def _sorted(items: list[JSON]) -> list[JSON]:
    return sorted(items, key=lambda i: str((i.get("metadata") or {}).get("name")))


def _gone(a: Adapter, api_version: str, kind: str, name: str, ns: str | None) -> bool:
    try:
        a.get(api_version, kind, name, ns)
    except Failure as failure:
        return failure.code == 404
    return False


# -- built-in kinds --------------------------------------------------------------------------


def _defaults_of_namespace(r: Run) -> Any:
    def present() -> bool:
        try:
            r.adapter.get("v1", "ServiceAccount", "default", r.ns)
            r.adapter.get("v1", "ConfigMap", "kube-root-ca.crt", r.ns)
        except Failure:
            return False
        return True

    return {"present": wait_for(present, 30.0)}


def _stale(r: Run) -> Any:
    current = r.adapter.get("v1", "ConfigMap", "cm1", r.ns)
    current["metadata"]["resourceVersion"] = "1"
    current["data"] = {"stale": "write"}
    return r.adapter.replace(current)


def _secret(r: Run) -> Any:
    r.adapter.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s1", "namespace": r.ns},
            "stringData": {"user": "ray"},
        }
    )
    return r.adapter.get("v1", "Secret", "s1", r.ns)


def _service(r: Run) -> Any:
    return r.adapter.create(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "svc1", "namespace": r.ns},
            "spec": {"selector": {"app": "x"}, "ports": [{"name": "http", "port": 80}]},
        }
    )


def _event(r: Run) -> Any:
    r.adapter.create(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "p1.1", "namespace": r.ns},
            "involvedObject": {"kind": "Pod", "name": "p1", "namespace": r.ns},
            "reason": "Tested",
            "message": "made by the differential suite",
            "type": "Normal",
        }
    )
    return _sorted(r.adapter.list("v1", "Event", r.ns))


def _apply_pod_twice(r: Run) -> Any:
    """Two managers apply identical values, list items with defaulted keys included."""
    r.adapter.apply(o.pod(r.ns, "p2"), "first")
    return r.adapter.apply(o.pod(r.ns, "p2"), "second")


def _apply_conflict(r: Run) -> Any:
    r.adapter.apply(o.configmap(r.ns, "cm2", {"k": "a"}), "first")
    return r.adapter.apply(o.configmap(r.ns, "cm2", {"k": "b"}), "second")


def _client_apply_configmap(r: Run) -> Any:
    r.adapter.client_apply(o.configmap(r.ns, "cm3", {"a": "1"}))
    return r.adapter.client_apply(o.configmap(r.ns, "cm3", {"a": "2", "b": "3"}))


def _client_apply_pod(r: Run) -> Any:
    r.adapter.client_apply(o.pod(r.ns, "p3"))
    return r.adapter.client_apply(o.pod(r.ns, "p3", image="busybox:1.37"))


def _owned(ns: str, name: str, owner: JSON) -> JSON:
    child = o.configmap(ns, name, {"x": "1"})
    meta = owner["metadata"]
    child["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": meta["name"], "uid": meta["uid"]}
    ]
    return child


def _collected(r: Run, policy: str | None) -> Any:
    a = r.adapter
    owner = a.create(o.configmap(r.ns, f"owner-{policy or 'default'}".lower(), {"x": "1"}))
    child = f"child-{policy or 'default'}".lower()
    a.create(_owned(r.ns, child, owner))
    answer = a.delete("v1", "ConfigMap", owner["metadata"]["name"], r.ns, policy)
    owner_name = owner["metadata"]["name"]
    collected = wait_for(
        lambda: _gone(a, "v1", "ConfigMap", child, r.ns)
        and _gone(a, "v1", "ConfigMap", owner_name, r.ns),
        30.0,
    )
    return {"answer": answer, "collected": collected}


def _orphaned(r: Run) -> Any:
    a = r.adapter
    owner = a.create(o.configmap(r.ns, "owner-orphan", {"x": "1"}))
    a.create(_owned(r.ns, "child-orphan", owner))
    answer = a.delete("v1", "ConfigMap", "owner-orphan", r.ns, "Orphan")

    def orphaned() -> bool:
        try:
            child = a.get("v1", "ConfigMap", "child-orphan", r.ns)
        except Failure:
            return False
        return not child["metadata"].get("ownerReferences")

    return {"answer": answer, "orphaned": wait_for(orphaned, 30.0)}


def _events_v1(r: Run) -> Any:
    return _sorted(r.adapter.list("events.k8s.io/v1", "Event", r.ns))


def _client_apply_raycluster(r: Run) -> Any:
    r.adapter.client_apply(o.raycluster(r.ns, "rc3"))
    changed = o.raycluster(r.ns, "rc3")
    changed["spec"]["suspend"] = True
    return own(r.adapter.client_apply(changed))


def _set_image(r: Run) -> Any:
    r.adapter.set_image("pod", "p1", r.ns, "side", "busybox:1.38")
    return r.adapter.get("v1", "Pod", "p1", r.ns)


def _diff_unchanged(r: Run) -> Any:
    """`kubectl diff` of what `kubectl apply` applied a moment ago: nothing to show."""
    return r.adapter.diff(o.configmap(r.ns, "cm3", {"a": "2", "b": "3"}), server_side=False)


def _diff_unchanged_raycluster(r: Run) -> Any:
    changed = o.raycluster(r.ns, "rc3")
    changed["spec"]["suspend"] = True
    return r.adapter.diff(changed, server_side=False)


# -- watches ---------------------------------------------------------------------------------


def _watch_changes(r: Run) -> Any:
    """Change and delete a ConfigMap, then watch from before the change: the events, in
    order, with the objects as they were."""
    a = r.adapter
    made = a.create(o.configmap(r.ns, "watched", {"v": "1"}))
    a.merge_patch("v1", "ConfigMap", "watched", r.ns, {"data": {"v": "2"}})
    a.delete("v1", "ConfigMap", "watched", r.ns)
    since = made["metadata"]["resourceVersion"]
    return a.watch("v1", "ConfigMap", r.ns, since, seconds=2, events=2)


def _watch_too_old(r: Run) -> Any:
    """A watch from a resourceVersion the server no longer keeps (resourceVersion 1)."""
    return r.adapter.watch("v1", "ConfigMap", r.ns, "1", seconds=2, events=1)


def _watch_bookmarks(r: Run) -> Any:
    """A 4-second watch with bookmarks while a ConfigMap keeps changing: which kinds of event
    came, and what a bookmark carries."""
    a = r.adapter
    made = a.create(o.configmap(r.ns, "ticker", {"n": "0"}))
    stop = threading.Event()

    def tick() -> None:
        n = 0
        while not stop.wait(0.4):
            n += 1
            a.merge_patch("v1", "ConfigMap", "ticker", r.ns, {"data": {"n": str(n)}})

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        since = made["metadata"]["resourceVersion"]
        events = a.watch("v1", "ConfigMap", r.ns, since, seconds=4, bookmarks=True)
    finally:
        stop.set()
        ticker.join()
    bookmarks = [e["object"] for e in events if e["type"] == "BOOKMARK"]
    return {
        "types": sorted({e["type"] for e in events}),
        "bookmark": sorted(
            {(k, tuple(sorted((b.get("metadata") or {}).keys()))) for b in bookmarks for k in b}
        ),
    }


def _watch_table(r: Run) -> Any:
    """`kubectl get -w` of ConfigMaps while one is changed: every line keeps the columns."""
    a = r.adapter
    a.create(o.configmap(r.ns, "shown", {"v": "1"}, labels={"shown": "yes"}))

    def change() -> None:
        a.merge_patch("v1", "ConfigMap", "shown", r.ns, {"data": {"w": "2"}})
        time.sleep(0.5)
        a.merge_patch("v1", "ConfigMap", "shown", r.ns, {"data": {"x": "3"}})

    return a.watch_table("v1", "ConfigMap", r.ns, "shown=yes", change)


# -- RayClusters -------------------------------------------------------------------------------


def _apply_ports(r: Run, manager: str, force: bool = False, dry_run: bool = False) -> Any:
    return own(r.adapter.apply(o.raycluster_with_ports(r.ns, "rcp"), manager, force, dry_run))


def _server_side_diff(r: Run) -> Any:
    """kubectl: `diff --server-side` of the applied configuration; the others: the same
    apply with dryRun=All."""
    config = o.raycluster_with_ports(r.ns, "rcp")
    try:
        return r.adapter.diff(config, server_side=True, manager="first")
    except Exception as exc:
        if type(exc).__name__ != "Unsupported":
            raise
    return own(r.adapter.apply(config, "first", dry_run=True))


def _ready(r: Run, name: str) -> Any:
    """Wait until KubeRay says the cluster is ready; then its status as KubeRay wrote it."""
    met = r.adapter.wait(RAY, "RayCluster", name, r.ns, "jsonpath={.status.state}=ready")
    status = dict(r.adapter.get(RAY, "RayCluster", name, r.ns).get("status") or {})
    status.pop("lastUpdateTime", None)
    return {"ready": met, "status": status}


def _head_service(r: Run) -> Any:
    """The head Service KubeRay makes for a cluster (`<cluster>-head-svc`)."""
    return r.adapter.get("v1", "Service", "rcp-head-svc", r.ns)


def _delete_and_recheck(r: Run, api_version: str, kind: str, name: str, ns: str | None) -> Any:
    answer = r.adapter.delete(api_version, kind, name, ns)
    if isinstance(answer, dict) and answer.get("kind") != "Status":
        answer = own(answer)
    return {"answer": answer, "gone": r.adapter.wait(api_version, kind, name, ns, "delete")}


# -- Kueue -------------------------------------------------------------------------------------


def _queues(r: Run) -> tuple[str, str, str]:
    return r.cluster_name("rf"), r.cluster_name("cq"), "lq"


def _create_flavor(r: Run) -> Any:
    return own(r.adapter.create(o.resource_flavor(_queues(r)[0])))


def _apply_cluster_queue(r: Run, manager: str) -> Any:
    flavor, cq, _ = _queues(r)
    return own(r.adapter.apply(o.cluster_queue(cq, flavor), manager))


def _create_local_queue(r: Run) -> Any:
    _, cq, lq = _queues(r)
    return own(r.adapter.create(o.local_queue(r.ns, lq, cq)))


def _wait_active(r: Run, kind: str) -> Any:
    _, cq, lq = _queues(r)
    name, ns = (cq, None) if kind == "ClusterQueue" else (lq, r.ns)
    met = r.adapter.wait(o.KUEUE, kind, name, ns, "condition=Active")

    def observed() -> JSON:
        """The queue once Kueue has observed its generation (the clients other than kubectl
        wait for the condition alone, so it may still name the one before)."""
        found: JSON = r.adapter.get(o.KUEUE, kind, name, ns)
        generation = found["metadata"].get("generation")
        conditions = (found.get("status") or {}).get("conditions") or []
        seen = [c.get("observedGeneration") for c in conditions if c.get("type") == "Active"]
        return found if seen == [generation] else {}

    found = wait_for(observed, 30.0) or r.adapter.get(o.KUEUE, kind, name, ns)
    conditions = (found.get("status") or {}).get("conditions") or []
    return {
        "met": met,
        "generation": found["metadata"].get("generation"),
        "active": [c for c in conditions if c.get("type") == "Active"],
    }


def _change_cluster_queue(r: Run) -> Any:
    """A spec change (a new generation), then `kubectl wait --for=condition=Active`, which
    waits for a condition of the new generation."""
    flavor, cq, _ = _queues(r)
    group = o.cluster_queue(cq, flavor, cpu="10")["spec"]["resourceGroups"]
    r.adapter.merge_patch(o.KUEUE, "ClusterQueue", cq, None, {"spec": {"resourceGroups": group}})
    return _wait_active(r, "ClusterQueue")


def _queued_raycluster(r: Run) -> Any:
    """A RayCluster in a Kueue queue, as created: Kueue's webhook suspends it."""
    labels = {**o.LABELS, "kueue.x-k8s.io/queue-name": _queues(r)[2]}
    return own(r.adapter.create(o.raycluster_with_ports(r.ns, "rcq", labels)))


# -- RayJobs and TrainJobs -----------------------------------------------------------------------


def _rayjob_finalizer(r: Run) -> Any:
    """Create a RayJob; KubeRay puts its finalizer on it."""
    a = r.adapter
    a.create(o.rayjob(r.ns, "rj"))

    def finalizers() -> list[str]:
        return list(a.get(RAY, "RayJob", "rj", r.ns)["metadata"].get("finalizers") or [])

    return wait_for(finalizers, 60.0)


def _delete_rayjob_twice(r: Run) -> Any:
    a = r.adapter
    codes = []
    for _ in range(2):
        try:
            a.delete(RAY, "RayJob", "rj", r.ns)
        except Failure as failure:
            codes.append(failure.code)
        else:
            codes.append(200)
    return {"deletes": codes, "gone": a.wait(RAY, "RayJob", "rj", r.ns, "delete")}


def _trainjob_environment(r: Run) -> Any:
    """A TrainJob on Trainer's torch runtime: the environment its trainer pod gets."""
    a = r.adapter
    a.create(o.trainjob(r.ns, "tj", RUNTIME))

    def pods() -> list[JSON]:
        return a.list("v1", "Pod", r.ns, labels="jobset.sigs.k8s.io/jobset-name=tj")

    found = wait_for(pods, 90.0)
    env: dict[str, str] = {}
    for pod in found or []:
        for container in pod["spec"]["containers"]:
            for var in container.get("env") or []:
                env[f"{container['name']}:{var['name']}"] = str(var.get("value", "<from>"))
    return {"pods": len(found or []), "env": env}


# -- the script ------------------------------------------------------------------------------

C = "ConfigMap"

SCRIPT: list[tuple[str, Step]] = [
    ("default service account and root CA", _defaults_of_namespace),
    ("create configmap", lambda r: r.adapter.create(o.configmap(r.ns, "cm1", {"a": "1"}))),
    ("create it again", lambda r: r.adapter.create(o.configmap(r.ns, "cm1", {"a": "1"}))),
    ("get configmap", lambda r: r.adapter.get("v1", C, "cm1", r.ns)),
    ("get missing configmap", lambda r: r.adapter.get("v1", C, "nope", r.ns)),
    ("list by label", lambda r: _sorted(r.adapter.list("v1", C, r.ns, labels="diff=yes"))),
    (
        "merge patch labels",
        lambda r: r.adapter.merge_patch("v1", C, "cm1", r.ns, {"metadata": {"labels": {"x": "y"}}}),
    ),
    ("replace with stale resourceVersion", _stale),
    (
        "create with invalid name",
        lambda r: r.adapter.create(o.configmap(r.ns, "Not_Valid", {"a": "1"})),
    ),
    (
        "create with invalid data key",
        lambda r: r.adapter.create(o.configmap(r.ns, "cm-bad", {"no spaces": "1"})),
    ),
    ("secret from stringData", _secret),
    ("service defaults", _service),
    ("pod defaults", lambda r: r.adapter.create(o.pod(r.ns, "p1"))),
    (
        "strategic merge: set one image",
        lambda r: r.adapter.strategic_patch(
            "v1",
            "Pod",
            "p1",
            r.ns,
            {"spec": {"containers": [{"name": "main", "image": "busybox:1.37"}]}},
        ),
    ),
    (
        "change a pod's command",
        lambda r: r.adapter.strategic_patch(
            "v1", "Pod", "p1", r.ns, {"spec": {"containers": [{"name": "main", "command": ["t"]}]}}
        ),
    ),
    ("event and list", _event),
    ("events through events.k8s.io", _events_v1),
    ("client-side apply of a ConfigMap, twice", _client_apply_configmap),
    ("diff of an unchanged object", _diff_unchanged),
    ("client-side apply of a Pod, new image", _client_apply_pod),
    ("table of pods", lambda r: r.adapter.table("v1", "Pod", r.ns)),
    ("delete owner: dependents collected", lambda r: _collected(r, None)),
    ("foreground delete", lambda r: _collected(r, "Foreground")),
    ("orphan delete", _orphaned),
    ("apply a pod by two managers, same values", _apply_pod_twice),
    ("apply a conflicting value", _apply_conflict),
    (
        "apply with force",
        lambda r: r.adapter.apply(o.configmap(r.ns, "cm2", {"k": "b"}), "second", force=True),
    ),
    ("list pods", lambda r: _sorted(r.adapter.list("v1", "Pod", r.ns, labels="diff=yes"))),
    ("watch a ConfigMap's changes", _watch_changes),
    ("watch from a resourceVersion too old", _watch_too_old),
    ("bookmarks of a short watch", _watch_bookmarks),
    ("watch a table of ConfigMaps", _watch_table),
    ("set image", _set_image),
    ("delete configmap", lambda r: r.adapter.delete("v1", C, "cm1", r.ns)),
    ("delete it again", lambda r: r.adapter.delete("v1", C, "cm1", r.ns)),
    ("may I create pods", lambda r: r.adapter.can_i("create", "pods", r.ns)),
    (
        "table of a CRD",
        lambda r: r.adapter.table(
            "apiextensions.k8s.io/v1", "CustomResourceDefinition", None, "rayclusters.ray.io"
        ),
    ),
    # RayClusters
    ("create RayCluster", lambda r: own(r.adapter.create(o.raycluster(r.ns, "rc1")))),
    ("get RayCluster", lambda r: own(r.adapter.get(RAY, "RayCluster", "rc1", r.ns))),
    (
        "merge patch RayCluster spec",
        lambda r: own(
            r.adapter.merge_patch(RAY, "RayCluster", "rc1", r.ns, {"spec": {"suspend": True}})
        ),
    ),
    (
        "strategic merge on a custom resource",
        lambda r: r.adapter.strategic_patch(
            RAY, "RayCluster", "rc1", r.ns, {"spec": {"suspend": False}}
        ),
    ),
    (
        "RayCluster with a wrong type",
        lambda r: r.adapter.create(
            {**o.raycluster(r.ns, "rc2"), "spec": {"rayVersion": 2, "headGroupSpec": {}}}
        ),
    ),
    ("client-side apply of a RayCluster, changed", _client_apply_raycluster),
    ("diff of an unchanged RayCluster", _diff_unchanged_raycluster),
    ("explain raycluster.spec", lambda r: r.adapter.explain("raycluster.spec")),
    (
        "list RayClusters",
        lambda r: [own(i) for i in _sorted(r.adapter.list(RAY, "RayCluster", r.ns))],
    ),
    ("apply a RayCluster with container ports", lambda r: _apply_ports(r, "first")),
    ("apply it again, same manager", lambda r: _apply_ports(r, "first")),
    ("server-side diff of the same configuration", _server_side_diff),
    ("apply by a second manager, same values", lambda r: _apply_ports(r, "second")),
    ("take it over with force", lambda r: _apply_ports(r, "second", force=True)),
    ("apply by the first manager again", lambda r: _apply_ports(r, "first")),
    ("wait until the RayCluster is ready", lambda r: _ready(r, "rcp")),
    ("the head Service", _head_service),
    (
        "delete the RayCluster and re-check",
        lambda r: _delete_and_recheck(r, RAY, "RayCluster", "rcp", r.ns),
    ),
    # Kueue
    ("create a ResourceFlavor", _create_flavor),
    ("apply a ClusterQueue with nominalQuota 9", lambda r: _apply_cluster_queue(r, "first")),
    ("apply it by a second manager, same values", lambda r: _apply_cluster_queue(r, "second")),
    ("create a LocalQueue", _create_local_queue),
    ("wait until the LocalQueue is Active", lambda r: _wait_active(r, "LocalQueue")),
    ("change the ClusterQueue, wait until Active", _change_cluster_queue),
    ("create a RayCluster in the queue", _queued_raycluster),
    ("the queued RayCluster is admitted and ready", lambda r: _ready(r, "rcq")),
    ("delete it and re-check", lambda r: _delete_and_recheck(r, RAY, "RayCluster", "rcq", r.ns)),
    (
        "delete the ClusterQueue and re-check",
        lambda r: _delete_and_recheck(r, o.KUEUE, "ClusterQueue", _queues(r)[1], None),
    ),
    (
        "delete the ResourceFlavor and re-check",
        lambda r: _delete_and_recheck(r, o.KUEUE, "ResourceFlavor", _queues(r)[0], None),
    ),
    # RayJobs and TrainJobs
    ("a RayJob gets KubeRay's finalizer", _rayjob_finalizer),
    ("delete the RayJob twice", _delete_rayjob_twice),
    ("a TrainJob's pod environment", _trainjob_environment),
    ("get namespace", lambda r: r.adapter.get("v1", "Namespace", r.ns, None)),
]
