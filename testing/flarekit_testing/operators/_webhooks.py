"""The admission webhooks of the simulated operators: what the real ones change or refuse
before a write is stored (see `flarekit_testing.apiserver.AdmissionWebhook`).

Why: users see these answers at once, before any controller runs, and they change outcomes:
`kubectl delete` of a ClusterQueue answers the object, still terminating, because Kueue's
webhook gave it a finalizer; a second manager's identical apply of a ClusterQueue conflicts
because Kueue stored `nominalQuota: 9` as `"9"`; a RayCluster created in a queue comes back
suspended; a queued RayJob that would keep its cluster is refused. What is modelled is what
Kueue v0.19 and AppWrapper v1.2 answer for the kinds FakeCluster serves, as observed on the
real operators (the differential suite, tests/clients, compares them):

- Kueue, ResourceFlavor and ClusterQueue creates: the `kueue.x-k8s.io/resource-in-use`
  finalizer; a ResourceFlavor's empty `spec`; a ClusterQueue's quotas as canonical quantities.
- Kueue, job creates (RayCluster, RayJob, TrainJob, PyTorchJob, AppWrapper): the object is
  read into its Go type first (a field of the wrong type: 400); a job labelled with a queue
  is suspended, and the pod templates Kueue reads get the empty `metadata` (and Ray worker
  groups the empty `scaleStrategy`) its Go types write back; every TrainJob gets Kueue's
  entry in `runtimePatches`.
- Kueue, job creates and updates: read into the Go type (400), and a queued RayJob must
  delete its cluster when it finishes (403).
- AppWrapper creates: the `workload.codeflare.dev/user` and `userid` labels of the user who
  created it.

Not modelled: Kueue's other validations (queue-name changes of running jobs, autoscaling,
topology requests, ...), Trainer's and the training operator's own validating webhooks.
"""

from __future__ import annotations

import re
from typing import Any

from flarekit_testing.apiserver import AdmissionRequest, decode_error, denied, quantity

__all__ = ["AppWrapperWebhook", "KueueWebhooks"]

JSON = dict[str, Any]
KUEUE = "kueue.x-k8s.io"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
FINALIZER = "kueue.x-k8s.io/resource-in-use"
KUEUE_MANAGER = "kueue.x-k8s.io/manager"

#: The job kinds Kueue's webhooks take, where each is suspended, and the webhooks' names.
JOBS: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {
    ("ray.io", "rayclusters"): (("spec", "suspend"), "raycluster"),
    ("ray.io", "rayjobs"): (("spec", "suspend"), "rayjob"),
    ("trainer.kubeflow.org", "trainjobs"): (("spec", "suspend"), "trainjob"),
    ("kubeflow.org", "pytorchjobs"): (("spec", "runPolicy", "suspend"), "pytorchjob"),
    ("workload.codeflare.dev", "appwrappers"): (("spec", "suspend"), "appwrapper"),
}
_QUOTAS = ("nominalQuota", "borrowingLimit", "lendingLimit")


def _spec(obj: JSON) -> JSON:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


def _empty_template_metadata(template: Any) -> None:
    if isinstance(template, dict):
        template.setdefault("metadata", {})


def _ray_cluster_spec(spec: Any) -> None:
    """What Kueue's Go types write back into a queued Ray cluster spec."""
    if not isinstance(spec, dict):
        return
    _empty_template_metadata((spec.get("headGroupSpec") or {}).get("template"))
    for group in spec.get("workerGroupSpecs") or []:
        if isinstance(group, dict):
            group.setdefault("scaleStrategy", {})
            _empty_template_metadata(group.get("template"))


def _declares(request: AdmissionRequest, *path: str) -> bool:
    node: Any = request.schema or {}
    for key in path:
        node = (node.get("properties") or {}).get(key) if isinstance(node, dict) else None
    return isinstance(node, dict)


class KueueWebhooks:
    """Kueue's mutating and validating webhooks for its queues and the jobs it manages."""

    def handles(self, group: str, plural: str, operation: str) -> bool:
        if group == KUEUE:
            return plural in ("resourceflavors", "clusterqueues") and operation == "CREATE"
        return (group, plural) in JOBS

    def mutate(self, request: AdmissionRequest) -> None:
        if request.operation != "CREATE":
            return
        obj = request.obj
        if request.group == KUEUE:
            finalizers = obj["metadata"].setdefault("finalizers", [])
            if FINALIZER not in finalizers:
                finalizers.append(FINALIZER)
            spec = _spec(obj)
            for group in spec.get("resourceGroups") or []:
                for flavor in (group or {}).get("flavors") or []:
                    for resource in (flavor or {}).get("resources") or []:
                        for key in _QUOTAS:
                            if isinstance(resource, dict) and key in resource:
                                resource[key] = quantity.canonical(resource[key])
            return
        self._read(request, "m")
        if request.plural == "trainjobs" and _declares(request, "spec", "runtimePatches"):
            patches = _spec(obj).setdefault("runtimePatches", [])
            if not any(p.get("manager") == KUEUE_MANAGER for p in patches if isinstance(p, dict)):
                spec_patch: JSON = {"template": {"spec": {}}}
                patches.append({"manager": KUEUE_MANAGER, "trainingRuntimeSpec": spec_patch})
        if not request.labels.get(QUEUE_LABEL):
            return
        path, _ = JOBS[(request.group, request.plural)]
        node = obj
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = True
        spec = _spec(obj)
        if request.plural == "rayclusters":
            _ray_cluster_spec(spec)
        elif request.plural == "rayjobs":
            _ray_cluster_spec(spec.get("rayClusterSpec"))
        elif request.plural == "pytorchjobs":
            for replica in (spec.get("pytorchReplicaSpecs") or {}).values():
                _empty_template_metadata((replica or {}).get("template"))

    def validate(self, request: AdmissionRequest) -> None:
        if request.group == KUEUE:
            return
        self._read(request, "v")
        queued = bool(request.labels.get(QUEUE_LABEL))
        keeps = _spec(request.obj).get("shutdownAfterJobFinishes") is not True
        if request.plural == "rayjobs" and queued and keeps:
            raise denied(
                "vrayjob.kb.io",
                "spec.shutdownAfterJobFinishes: Invalid value: false: a kueue managed job "
                "should delete the cluster after finishing",
            )

    @staticmethod
    def _read(request: AdmissionRequest, prefix: str) -> None:
        """The webhook reads the object into its Go type first: a wrong type is a 400."""
        if request.schema is None:
            return
        problem = decode_error(request.obj, request.schema, request.kind)
        if problem is not None:
            name = JOBS[(request.group, request.plural)][1]
            raise denied(f"{prefix}{name}.kb.io", problem, code=400)


def _label_value(text: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", text)[:63]
    return cleaned.strip("._-")


class AppWrapperWebhook:
    """AppWrapper's own mutating webhook: who created it, in two labels."""

    def handles(self, group: str, plural: str, operation: str) -> bool:
        return (group, plural) == ("workload.codeflare.dev", "appwrappers")

    def mutate(self, request: AdmissionRequest) -> None:
        if request.operation != "CREATE" or not request.user:
            return
        labels = request.obj["metadata"].setdefault("labels", {})
        labels["workload.codeflare.dev/user"] = _label_value(request.user)
        labels["workload.codeflare.dev/userid"] = _label_value(request.user)
        if labels.get(QUEUE_LABEL):
            _spec(request.obj)["suspend"] = True

    def validate(self, request: AdmissionRequest) -> None:
        return
