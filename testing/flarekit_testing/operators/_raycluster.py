"""A simulated KubeRay RayCluster controller: clusters become ready (or fail) on a schedule.

The status follows what KubeRay writes: `state: ready` once every pod runs and is ready,
worker replica counts, the desired CPU/memory/GPU/TPU summed over head and workers, the head
pod's name and IP, the head Service (made first, see `_ray_head_service`) and its ports as
`endpoints`, and the `HeadPodReady` / `RayClusterProvisioned` conditions where the served CRD
has conditions. The head starts first and is reported ready before the workers start (they
wait for its GCS, as KubeRay's init container makes them), so `HeadPodReady` comes before
`state: ready`. `spec.suspend: true` gives KubeRay's suspended status (`state: suspended`,
`RayClusterSuspended`), and resuming restarts the schedule. Failure uses the
deprecated-but-still-written `state: failed` with a `reason`, plus a `ReplicaFailure`
condition as current KubeRay reports pod creation errors.

The head and worker pods exist while the cluster does (Pending while it provisions, gone when
it is suspended, failed or deleted), labelled as KubeRay labels them (`ray.io/cluster`,
`ray.io/node-type`, `ray.io/group`, `ray.io/identifier`, ...). Simulated, they print one line
saying that no Ray runs in them (or the test's `logs=lambda cluster, pod: [...]`). With
`local=` they are real Ray nodes on this machine (`flarekit_testing.local`): the cluster is
ready when Ray says its nodes are, and its dashboard is exposed on 127.0.0.1 by an Ingress
whose status gives the address.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from flarekit_testing.apiserver import make_ca, quantity
from flarekit_testing.operators import _pods as _sim_pods
from flarekit_testing.operators._base import (
    Clock,
    SimController,
    check_delay,
    declares,
    is_suspended,
    set_condition,
    suffix,
    timestamp,
)
from flarekit_testing.operators._ray_head_service import (
    endpoints,
    ensure_head_service,
    head_service_name,
)

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster
    from flarekit_testing.local import LocalKubelet

JSON = dict[str, Any]

_GPU = "nvidia.com/gpu"
_TPU = "google.com/tpu"
DEFAULT_FAILURE = "simulated failure: the head Pod could not be created"


def worker_groups(spec: Mapping[str, Any]) -> list[tuple[str, int, JSON]]:
    """(group name, pod count, pod template) of each worker group, replicas clamped to
    [minReplicas, maxReplicas] and multiplied by `numOfHosts` as KubeRay counts them."""
    out = []
    for group in spec.get("workerGroupSpecs") or []:
        low = int(group.get("minReplicas") or 0)
        high = int(group.get("maxReplicas") if group.get("maxReplicas") is not None else 2**31 - 1)
        replicas = group.get("replicas")
        count = low if replicas is None else min(max(int(replicas), low), high)
        hosts = int(group.get("numOfHosts") or 1)
        out.append((str(group.get("groupName", "")), count * hosts, group.get("template") or {}))
    return out


def pod_sets(spec: Mapping[str, Any]) -> list[tuple[str, int, JSON]]:
    """The head and every worker group as (name, count, pod template)."""
    head = (spec.get("headGroupSpec") or {}).get("template") or {}
    return [("head", 1, head), *worker_groups(spec)]


def _ip(prefix: str, uid: str, salt: str) -> str:
    raw = hashlib.sha256(f"{uid}/{salt}".encode()).digest()
    return f"{prefix}.{raw[0]}.{1 + raw[1] % 254}"


CLUSTER_LABEL = "ray.io/cluster"
CA_SECRET_LABEL = "ray.openshift.ai/cluster-name"


def ray_pods(obj: Mapping[str, Any]) -> list[JSON]:
    """The head and worker pods KubeRay creates for a RayCluster, with its labels."""
    meta, spec = obj["metadata"], obj.get("spec") or {}
    name, uid, namespace = str(meta["name"]), str(meta["uid"]), str(meta.get("namespace"))
    owner = {
        "apiVersion": obj["apiVersion"],
        "kind": "RayCluster",
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }
    common = {
        CLUSTER_LABEL: name,
        "ray.io/is-ray-node": "yes",
        "app.kubernetes.io/name": "kuberay",
        "app.kubernetes.io/created-by": "kuberay-operator",
    }
    head_template = (spec.get("headGroupSpec") or {}).get("template") or {}
    pods = [
        _sim_pods.pod_from_template(
            namespace,
            f"{name}-head-{suffix(uid)}",
            head_template,
            {
                **common,
                "ray.io/node-type": "head",
                "ray.io/group": "headgroup",
                "ray.io/identifier": f"{name}-head",
            },
            owner,
            "rayproject/ray",
        )
    ]
    for group, count, template in worker_groups(spec):
        for index in range(count):
            pods.append(
                _sim_pods.pod_from_template(
                    namespace,
                    f"{name}-{group}-worker-{suffix(uid, group, str(index))}",
                    template,
                    {
                        **common,
                        "ray.io/node-type": "worker",
                        "ray.io/group": group,
                        "ray.io/identifier": f"{name}-worker",
                    },
                    owner,
                    "rayproject/ray",
                )
            )
    return pods


def default_logs(cluster: JSON, pod: JSON) -> list[str]:
    """What a simulated Ray pod prints: that no Ray runs in it."""
    kind = (pod["metadata"].get("labels") or {}).get("ray.io/node-type", "ray")
    name = cluster["metadata"]["name"]
    return [f"RayCluster {name} {kind} pod: KubeRay's pod is simulated; no Ray process runs in it"]


def desired(spec: Mapping[str, Any]) -> JSON:
    """The replica counts and summed resources KubeRay reports for a spec."""
    workers = worker_groups(spec)
    total: dict[str, Fraction] = {}
    for _, count, template in pod_sets(spec):
        quantity.add(total, quantity.pod_requests(template), count)
    groups = spec.get("workerGroupSpecs") or []
    return {
        "desiredWorkerReplicas": sum(count for _, count, _ in workers),
        "minWorkerReplicas": sum(
            int(g.get("minReplicas") or 0) * int(g.get("numOfHosts") or 1) for g in groups
        ),
        "maxWorkerReplicas": min(
            2**31 - 1,
            sum(int(g.get("maxReplicas") or 0) * int(g.get("numOfHosts") or 1) for g in groups),
        ),
        "desiredCPU": quantity.spell("cpu", total.get("cpu", Fraction(0))),
        "desiredMemory": quantity.spell("memory", total.get("memory", Fraction(0))),
        "desiredGPU": quantity.spell(_GPU, total.get(_GPU, Fraction(0))),
        "desiredTPU": quantity.spell(_TPU, total.get(_TPU, Fraction(0))),
    }


def _node_type(pod: Mapping[str, Any]) -> str:
    return str((pod["metadata"].get("labels") or {}).get("ray.io/node-type", ""))


def _phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def _pod_ready(pod: Mapping[str, Any]) -> bool:
    """The pod's `Ready` condition (a kubelet sets it once the readiness probe passes)."""
    conditions = (pod.get("status") or {}).get("conditions") or []
    return _phase(pod) == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in conditions
    )


def _head_pod_ready(head: Mapping[str, Any] | None) -> tuple[bool, str, str]:
    """`HeadPodReady` (status, reason, message) as KubeRay derives it from the head pod's
    `Ready` condition."""
    if head is None:
        return _HEAD_NOT_FOUND
    ready = next(
        (c for c in (head.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"),
        None,
    )
    if ready is None:
        return False, "Unknown", ""
    status = ready.get("status") == "True"
    reason = str(ready.get("reason") or ("HeadPodRunningAndReady" if status else "Unknown"))
    return status, reason, str(ready.get("message") or "")


_HEAD_NOT_FOUND = (False, "HeadPodNotFound", "Head Pod not found")


def ready_status(
    obj: Mapping[str, Any],
    conditions: list[JSON],
    head: Mapping[str, Any] | None = None,
    service: Mapping[str, Any] | None = None,
) -> JSON:
    """The status of a RayCluster whose head and workers are all running and ready: the head
    pod's name and IP as KubeRay reads them from the pod, the head Service's name, its
    cluster IP (the head pod's IP when it is headless) and its ports as `endpoints`."""
    meta, spec = obj["metadata"], obj.get("spec") or {}
    uid, name, now = str(meta["uid"]), str(meta["name"]), timestamp()
    counts = desired(spec)
    generation = meta.get("generation")
    head_ip = str(((head or {}).get("status") or {}).get("podIP") or _ip("10.244", uid, "pod"))
    conditions = kuberay_conditions(
        conditions,
        _head_pod_ready(head) if head is not None else (True, "HeadPodRunningAndReady", ""),
        (True, "AllPodRunningAndReadyFirstTime", "All Ray Pods are ready for the first time"),
    )
    cluster_ip = str(((service or {}).get("spec") or {}).get("clusterIP") or "None")
    previous = (obj.get("status") or {}).get("stateTransitionTimes") or {}
    return {
        **counts,
        "state": "ready",
        "reason": None,
        "readyWorkerReplicas": counts["desiredWorkerReplicas"],
        "availableWorkerReplicas": counts["desiredWorkerReplicas"],
        "endpoints": endpoints(service) or None,
        "head": {
            "podIP": head_ip,
            "podName": str(
                ((head or {}).get("metadata") or {}).get("name") or f"{name}-head-{suffix(uid)}"
            ),
            "serviceIP": head_ip if cluster_ip == "None" else cluster_ip,
            "serviceName": head_service_name(obj),
        },
        "conditions": conditions,
        "stateTransitionTimes": {**previous, "ready": previous.get("ready", now)},
        "lastUpdateTime": now,
        "observedGeneration": generation,
    }


def kuberay_conditions(
    conditions: list[JSON],
    head: tuple[bool, str, str],
    provisioned: tuple[bool, str, str] | None,
    suspended: bool = False,
    suspending: bool = False,
) -> list[JSON]:
    """The conditions as KubeRay's status gate sets them, in its order (`HeadPodReady`,
    `RayClusterProvisioned`, `RayClusterSuspended`, `RayClusterSuspending`) and, as KubeRay
    writes them, without `observedGeneration`. `provisioned` None leaves it as it is."""
    out = set_condition(conditions, "HeadPodReady", *head)
    if provisioned is not None:
        out = set_condition(out, "RayClusterProvisioned", *provisioned)
    out = set_condition(out, "RayClusterSuspended", suspended, "RayClusterSuspended")
    return set_condition(out, "RayClusterSuspending", suspending, "RayClusterSuspending")


class RayClusterController(SimController):
    """Makes RayClusters ready `ready_after` seconds after they are created or resumed.

    `fail_after` (seconds) makes clusters fail instead, with `failure_message` as the reason;
    `fail_when(obj)` limits failure to the clusters it returns True for. Clusters with
    `spec.suspend: true` stay suspended. `ca_secret=True` also gives each cluster the CA
    secret OpenShift AI's KubeRay makes for mTLS (`<cluster>-ca-secret-<suffix>`, labelled
    `ray.openshift.ai/cluster-name`, owned by the cluster), which codeflare-sdk's `apply()`
    and `wait_ready()` wait for.
    """

    resource = "rayclusters.ray.io"

    def __init__(
        self,
        ready_after: float = 0.0,
        *,
        fail_after: float | None = None,
        fail_when: Callable[[JSON], bool] | None = None,
        failure_message: str = DEFAULT_FAILURE,
        logs: _sim_pods.LogSource | None = None,
        clock: Clock | None = None,
        ca_secret: bool = False,
        local: bool | LocalKubelet = False,
    ) -> None:
        super().__init__(clock)
        self.ca_secret = ca_secret
        self.pods = _sim_pods.PodRunner(logs, default_logs, _sim_pods.kubelet_for(local))
        check_delay("ready_after", ready_after)
        check_delay("fail_after", fail_after)
        self.ready_after = ready_after
        self.fail_after = fail_after
        self.fail_when = fail_when
        self.failure_message = failure_message
        self._suspended: set[str] = set()

    def reconcile(self, cluster: FakeCluster, obj: JSON, since: float) -> None:
        uid = str(obj["metadata"]["uid"])
        status = obj.get("status") or {}
        # KubeRay makes the head Service before the pods, also while the cluster is suspended.
        service = ensure_head_service(cluster, obj)
        if is_suspended(obj):
            self._suspended.add(uid)
            self._delete_pods(cluster, obj)
            self.write_status(cluster, obj, self._suspended_status(obj))
            return
        if uid in self._suspended:
            self._suspended.discard(uid)
            self.restart_schedule(obj)
            self.write_status(cluster, obj, self._resumed_status(obj))
            return
        if status.get("state") == "failed":
            return
        failing = self.fail_after is not None and (self.fail_when is None or self.fail_when(obj))
        if failing and self.fail_after is not None and since >= self.fail_after:
            self._delete_pods(cluster, obj)
            self.write_status(cluster, obj, self._failed_status(obj))
            return
        pods = self._sync_pods(cluster, obj)
        if failing or since < self.ready_after or self.pods.unscheduled(pods):
            if status.get("state") != "ready":
                self.write_status(cluster, obj, self._provisioning_status(obj, pods))
            return
        head = next((p for p in pods if _node_type(p) == "head"), None)
        if head is not None:
            self.pods.start(cluster, obj, head)
            head = cluster.get("pods", head["metadata"]["name"], head["metadata"]["namespace"])
        if head is None or not _pod_ready(head):
            if status.get("state") != "ready":
                self.write_status(cluster, obj, self._provisioning_status(obj, pods))
            return
        workers = [p for p in pods if _node_type(p) != "head"]
        if any(_phase(p) == "Pending" for p in workers):
            # Workers wait for the head's GCS (KubeRay's init container): the head is
            # reported ready before they start.
            if status.get("state") != "ready":
                self.write_status(cluster, obj, self._provisioning_status(obj, [head, *workers]))
            for pod in workers:
                self.pods.start(cluster, obj, pod)
            return
        current = [
            cluster.get("pods", p["metadata"]["name"], p["metadata"]["namespace"]) for p in workers
        ]
        if not all(p is not None and _pod_ready(p) for p in current):
            if status.get("state") != "ready":
                self.write_status(cluster, obj, self._provisioning_status(obj, [head, *workers]))
            return
        if self.ca_secret:
            self._ensure_ca_secret(cluster, obj)
        if self.pods.local is not None and not self.pods.simulated_here(
            head["metadata"]["namespace"], head["metadata"]["name"]
        ):
            self.pods.local.ray.expose(cluster, obj)
        conditions = status.get("conditions") or []
        head_ready = any(
            c.get("type") == "HeadPodReady" and c.get("status") == "True" for c in conditions
        )
        if declares(self.rt(cluster), "status", "conditions") and not head_ready:
            # KubeRay sees the head pod ready in one reconcile and the whole cluster ready in
            # a later one: HeadPodReady first, `state: ready` a tick after.
            ready_pods = [head, *(p for p in current if p is not None)]
            self.write_status(cluster, obj, self._provisioning_status(obj, ready_pods))
            return
        self.write_status(cluster, obj, ready_status(obj, conditions, head, service))

    # -- pods -----------------------------------------------------------------------------------

    def _sync_pods(self, cluster: FakeCluster, obj: JSON) -> list[JSON]:
        """Create the pods the spec asks for and delete those it no longer does."""
        wanted = ray_pods(obj)
        names = {p["metadata"]["name"] for p in wanted}
        meta = obj["metadata"]
        for pod in self.pods.owned(cluster, meta["namespace"], {CLUSTER_LABEL: meta["name"]}):
            # A local Ray node whose process ended (Ray gives up on a node that starts too
            # slowly on a busy machine) is made again, as a kubelet restarts a Ray
            # container (KubeRay's pods restart Always) or KubeRay replaces a pod that ended.
            ended = self.pods.local is not None and _phase(pod) in ("Failed", "Succeeded")
            if ended or pod["metadata"]["name"] not in names:
                self.pods.delete_pod(cluster, meta["namespace"], pod["metadata"]["name"])
        return self.pods.ensure(cluster, wanted)

    def _delete_pods(self, cluster: FakeCluster, obj: JSON) -> None:
        meta = obj["metadata"]
        self.pods.delete(cluster, meta["namespace"], {CLUSTER_LABEL: meta["name"]})

    def _ensure_ca_secret(self, cluster: FakeCluster, obj: JSON) -> None:
        meta = obj["metadata"]
        name = f"{meta['name']}-ca-secret-{suffix(str(meta['uid']))}"
        if cluster.get("secrets", name, meta["namespace"]) is not None:
            return
        cert, key = make_ca(f"{meta['name']}-ca")
        owner = {
            "apiVersion": obj["apiVersion"],
            "kind": "RayCluster",
            "name": meta["name"],
            "uid": meta["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
        cluster.create(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {
                    "name": name,
                    "namespace": meta["namespace"],
                    "labels": {CA_SECRET_LABEL: meta["name"]},
                    "ownerReferences": [owner],
                },
                "data": {
                    "ca.crt": base64.b64encode(cert).decode(),
                    "ca.key": base64.b64encode(key).decode(),
                },
            }
        )

    def on_deleted(self, cluster: FakeCluster, obj: JSON) -> None:
        """Remove the cluster's pods, as garbage collection of owned objects would."""
        self._delete_pods(cluster, obj)
        if self.pods.local is not None:
            meta = obj["metadata"]
            self.pods.local.forget_cluster(str(meta["namespace"]), str(meta["name"]))

    def after_tick(self, cluster: FakeCluster) -> None:
        self.pods.tick(cluster)

    def _conditions(self, obj: JSON) -> list[JSON]:
        return list((obj.get("status") or {}).get("conditions") or [])

    def _provisioning_status(self, obj: JSON, pods: list[JSON] | None = None) -> JSON:
        generation = obj["metadata"].get("generation")
        head = next((p for p in pods or [] if _node_type(p) == "head"), None)
        ready_workers = sum(1 for p in pods or [] if _node_type(p) != "head" and _pod_ready(p))
        conditions = kuberay_conditions(
            self._conditions(obj),
            _head_pod_ready(head),
            (
                False,
                "RayClusterPodsProvisioning",
                "RayCluster Pods are being provisioned for first time",
            ),
            suspending=is_suspended(obj),
        )
        return {
            **desired(obj.get("spec") or {}),
            "readyWorkerReplicas": ready_workers,
            "availableWorkerReplicas": ready_workers,
            "conditions": conditions,
            "lastUpdateTime": timestamp(),
            "observedGeneration": generation,
        }

    def _failed_status(self, obj: JSON) -> JSON:
        generation = obj["metadata"].get("generation")
        conditions = set_condition(
            self._conditions(obj),
            "ReplicaFailure",
            True,
            "FailedCreateHeadPod",
            self.failure_message,
        )
        conditions = set_condition(conditions, "HeadPodReady", *_HEAD_NOT_FOUND)
        previous = (obj.get("status") or {}).get("stateTransitionTimes") or {}
        return {
            **desired(obj.get("spec") or {}),
            "state": "failed",
            "reason": self.failure_message,
            "readyWorkerReplicas": 0,
            "availableWorkerReplicas": 0,
            "conditions": conditions,
            "stateTransitionTimes": {**previous, "failed": timestamp()},
            "lastUpdateTime": timestamp(),
            "observedGeneration": generation,
        }

    def _suspended_status(self, obj: JSON) -> JSON:
        generation = obj["metadata"].get("generation")
        status = obj.get("status") or {}
        conditions = kuberay_conditions(
            self._conditions(obj),
            _HEAD_NOT_FOUND,
            (False, "RayClusterPodsProvisioning", "RayCluster has been suspended"),
            suspended=True,
        )
        previous = status.get("stateTransitionTimes") or {}
        return {
            **desired(obj.get("spec") or {}),
            "state": "suspended",
            "reason": None,
            "readyWorkerReplicas": 0,
            "availableWorkerReplicas": 0,
            "head": None,
            "endpoints": None,
            "conditions": conditions,
            "stateTransitionTimes": {
                **previous,
                "suspended": (
                    previous.get("suspended", timestamp())
                    if status.get("state") == "suspended"
                    else timestamp()
                ),
            },
            "lastUpdateTime": timestamp(),
            "observedGeneration": generation,
        }

    def _resumed_status(self, obj: JSON) -> JSON:
        conditions = set_condition(
            self._conditions(obj), "RayClusterSuspended", False, "RayClusterSuspended"
        )
        return {
            **self._provisioning_status({**obj, "status": {"conditions": conditions}}),
            "state": None,
        }
