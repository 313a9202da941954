"""Pods: the core/v1 resource type, what the apiserver's pod strategy adds, and pod states.

Facade code lists the pods an operator made for a job and reads their logs, so FakeCluster
serves `pods` next to namespaces. The apiserver's pod strategy does a few things the generic
write path does not: a new pod starts `Pending` with a `qosClass`, obvious defaults are filled
in, the spec cannot change after creation (except images and a few scheduling fields), and
containers need a unique name and an image. Nothing schedules or runs pods: their status is
what tests (`add_pod`, `start_pod`, `finish_pod`) and simulated controllers write.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any, ClassVar

from flarekit_testing.apiserver._errors import Cause
from flarekit_testing.apiserver._json import copy_json
from flarekit_testing.apiserver._meta import timestamp
from flarekit_testing.apiserver._names import dns1123_label_errors, go_quote
from flarekit_testing.apiserver._nodes import NODES as NODES
from flarekit_testing.apiserver._nodes import node_labels as node_labels
from flarekit_testing.apiserver._nodes import node_selector_matches as node_selector_matches
from flarekit_testing.apiserver._nodes import unschedulable_message as unschedulable_message
from flarekit_testing.apiserver._pod_admission import admit
from flarekit_testing.apiserver._resources import ResourceType, Version
from flarekit_testing.apiserver._schema_shapes import (
    INTEGER,
    OPEN,
    STRING,
    atomic_list,
    keyed_list,
    kind_schema,
    map_of,
    obj,
)
from flarekit_testing.apiserver._strategy import Column, Strategy
from flarekit_testing.apiserver._tables import AGE, NAME, since
from flarekit_testing.apiserver.quantity import parse

JSON = dict[str, Any]

PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
FINISHED = ("Succeeded", "Failed")
DEFAULT_IMAGE = "busybox:1.36"

_CONTAINER: JSON = obj(
    {
        "name": STRING,
        "image": STRING,
        "command": atomic_list(STRING),
        "args": atomic_list(STRING),
        "workingDir": STRING,
        "ports": keyed_list(
            obj(
                {"containerPort": INTEGER, "protocol": {"type": "string", "default": "TCP"}},
                ["containerPort"],
                open_=True,
            ),
            ["containerPort", "protocol"],
            merge_key="containerPort",
        ),
        "env": keyed_list(obj({"name": STRING}, ["name"], open_=True), ["name"], merge_key="name"),
        "envFrom": atomic_list(OPEN),
        "resources": OPEN,
        "volumeMounts": keyed_list(
            obj({"mountPath": STRING, "name": STRING}, open_=True),
            ["mountPath"],
            merge_key="mountPath",
        ),
        "terminationMessagePath": {"type": "string", "default": "/dev/termination-log"},
        "terminationMessagePolicy": {
            "type": "string",
            "default": "File",
            "enum": ["File", "FallbackToLogsOnError"],
        },
        "imagePullPolicy": STRING,
    },
    ["name"],
    open_=True,
)

#: The pod's structural schema: the shape of what matters here (containers merged by name,
#: their ports, env and mounts by key) and the defaults the apiserver fills in; the other
#: parts of spec and status are kept as given.
POD_SCHEMA: JSON = kind_schema(
    spec=obj(
        {
            "containers": keyed_list(_CONTAINER, ["name"], merge_key="name"),
            "initContainers": keyed_list(_CONTAINER, ["name"], merge_key="name"),
            "volumes": keyed_list(
                obj({"name": STRING}, ["name"], open_=True), ["name"], merge_key="name"
            ),
            "restartPolicy": {
                "type": "string",
                "default": "Always",
                "enum": ["Always", "OnFailure", "Never"],
            },
            "dnsPolicy": {"type": "string", "default": "ClusterFirst"},
            "schedulerName": {"type": "string", "default": "default-scheduler"},
            "terminationGracePeriodSeconds": {"type": "integer", "default": 30},
            "securityContext": {**OPEN, "default": {}},
            "nodeName": STRING,
            "nodeSelector": map_of(STRING, atomic=True),
            "tolerations": atomic_list(OPEN),
            "serviceAccountName": STRING,
        },
        open_=True,
    ),
    status=OPEN,
)

#: What `kubectl`/the apiserver say when a pod update touches anything else in `spec`.
SPEC_FORBIDDEN = (
    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
    "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be "
    "set to 1 if it was previously negative)"
)


def is_pods(rt: ResourceType) -> bool:
    return rt.group == "" and rt.plural == "pods"


def container_names(pod: Mapping[str, Any], init: bool = False) -> list[str]:
    spec = pod.get("spec") or {}
    key = "initContainers" if init else "containers"
    return [str(c.get("name", "")) for c in spec.get(key) or [] if isinstance(c, Mapping)]


def phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "Pending")


def is_finished(pod: Mapping[str, Any]) -> bool:
    return phase(pod) in FINISHED


def container_terminated(pod: Mapping[str, Any], container: str) -> bool:
    status = pod.get("status") or {}
    for entry in [
        *(status.get("containerStatuses") or []),
        *(status.get("initContainerStatuses") or []),
    ]:
        if entry.get("name") == container and "terminated" in (entry.get("state") or {}):
            return True
    return False


# -- create and update ------------------------------------------------------------------------


def validate(pod: Mapping[str, Any]) -> list[Cause]:
    """The container checks of pod validation that tests are likely to trip over."""
    causes: list[Cause] = []
    spec = pod.get("spec")
    containers = spec.get("containers") if isinstance(spec, Mapping) else None
    if not containers:
        return [Cause("FieldValueRequired", "Required value", "spec.containers")]
    seen: set[str] = set()
    for key in ("containers", "initContainers"):
        for i, container in enumerate((spec or {}).get(key) or []):
            where = f"spec.{key}[{i}]"
            name = container.get("name") if isinstance(container, Mapping) else None
            if not name:
                causes.append(Cause("FieldValueRequired", "Required value", f"{where}.name"))
            elif name in seen:
                causes.append(
                    Cause(
                        "FieldValueDuplicate",
                        f"Duplicate value: {go_quote(str(name))}",
                        f"{where}.name",
                    )
                )
            else:
                seen.add(str(name))
                for problem in dns1123_label_errors(str(name)):
                    causes.append(
                        Cause(
                            "FieldValueInvalid",
                            f"Invalid value: {go_quote(str(name))}: {problem}",
                            f"{where}.name",
                        )
                    )
            if isinstance(container, Mapping) and not container.get("image"):
                causes.append(Cause("FieldValueRequired", "Required value", f"{where}.image"))
    return causes


def _pull_policy(image: str) -> str:
    """`Always` for `:latest` or untagged images, else `IfNotPresent` (the apiserver's default)."""
    last = image.rsplit("/", 1)[-1]
    if "@" in last:
        return "IfNotPresent"
    tag = last.rpartition(":")[2] if ":" in last else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def qos_class(spec: Mapping[str, Any]) -> str:
    """Guaranteed, Burstable or BestEffort, from the containers' CPU and memory resources."""
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    for container in containers:
        resources = container.get("resources") or {}
        own_limits = {
            k: v for k, v in (resources.get("limits") or {}).items() if k in ("cpu", "memory")
        }
        own_requests = {
            k: v for k, v in (resources.get("requests") or {}).items() if k in ("cpu", "memory")
        }
        for name, value in own_requests.items():
            requests[name] = requests.get(name, Fraction(0)) + parse(value)
        for name, value in own_limits.items():
            limits[name] = limits.get(name, Fraction(0)) + parse(value)
        if set(own_limits) != {"cpu", "memory"}:
            guaranteed = False
        for name, value in own_requests.items():
            if name in own_limits and parse(value) != parse(own_limits[name]):
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def set_defaults(pod: JSON) -> None:
    """What decoding a pod sets (`SetDefaults_Pod`, `SetDefaults_Container`): the image pull
    policy from each image's tag, service links on, and the containers' `resources` the Go
    type always has."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            if not isinstance(container, dict):
                continue
            if container.get("image"):
                container.setdefault("imagePullPolicy", _pull_policy(str(container["image"])))
            container.setdefault("resources", {})
    spec.setdefault("enableServiceLinks", True)


def prepare_for_create(pod: JSON) -> None:
    """What the pod strategy does to a new pod: `Pending` status with its QoS class."""
    given = pod.get("spec")
    spec: JSON = given if isinstance(given, dict) else {}
    try:
        qos = qos_class(spec)
    except (ValueError, AttributeError):
        qos = "BestEffort"  # validation reports the bad resources
    pod["status"] = {"phase": "Pending", "qosClass": qos}


def _comparable(spec: Mapping[str, Any]) -> JSON:
    out = copy_json(dict(spec))
    for key in ("containers", "initContainers"):
        for container in out.get(key) or []:
            if isinstance(container, dict):
                container.pop("image", None)
    out.pop("activeDeadlineSeconds", None)
    out.pop("tolerations", None)
    return out


def update_causes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Cause]:
    """A spec change outside what the apiserver allows on a running pod is forbidden (a
    change in the number of containers first, and alone, as ValidatePodUpdate checks it)."""
    counts = [len((pod.get("spec") or {}).get("containers") or []) for pod in (old, new)]
    if counts[0] != counts[1]:
        why = "Forbidden: pod updates may not add or remove containers"
        return [Cause("FieldValueForbidden", why, "spec.containers")]
    if _comparable(old.get("spec") or {}) == _comparable(new.get("spec") or {}):
        return []
    return [Cause("FieldValueForbidden", SPEC_FORBIDDEN, "spec")]


# -- building pods and their states -----------------------------------------------------------


def container(value: str | Mapping[str, Any]) -> JSON:
    """A container from a name (with a small default image) or a full container mapping."""
    if isinstance(value, str):
        return {"name": value, "image": DEFAULT_IMAGE}
    out = dict(value)
    out.setdefault("image", DEFAULT_IMAGE)
    return out


def manifest(
    namespace: str,
    name: str,
    containers: Iterable[str | Mapping[str, Any]],
    labels: Mapping[str, str] | None = None,
    *,
    annotations: Mapping[str, str] | None = None,
    owner: Mapping[str, Any] | None = None,
    spec: Mapping[str, Any] | None = None,
) -> JSON:
    """A Pod object to create: `spec` (a pod template's spec) is kept, its containers replaced
    by `containers` when any are given."""
    body: JSON = dict(spec or {})
    given = [container(c) for c in containers]
    if given:
        body["containers"] = given
    meta: JSON = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if annotations:
        meta["annotations"] = dict(annotations)
    if owner is not None:
        meta["ownerReferences"] = [dict(owner)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}


def _address(pod: Mapping[str, Any], prefix: str) -> str:
    raw = hashlib.sha256(f"{pod['metadata'].get('uid', '')}/{prefix}".encode()).digest()
    return f"{prefix}.{raw[0]}.{1 + raw[1] % 254}"


def _conditions(ready: bool, reason: str = "") -> list[JSON]:
    now = timestamp()
    out = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": now}]
    for type_ in ("Initialized", "ContainersReady", "Ready"):
        entry: JSON = {"type": type_, "status": "True", "lastTransitionTime": now}
        if type_ != "Initialized" and not ready:
            entry.update(status="False", reason=reason)
        out.append(entry)
    return out


def running_status(pod: Mapping[str, Any]) -> JSON:
    """The status a kubelet reports once every container runs and is ready."""
    now = timestamp()
    images = {
        c.get("name"): c.get("image", "") for c in (pod.get("spec") or {}).get("containers") or []
    }
    return {
        "phase": "Running",
        "conditions": _conditions(True),
        "hostIP": _address(pod, "172.18"),
        "podIP": _address(pod, "10.244"),
        "startTime": (pod.get("status") or {}).get("startTime") or now,
        "containerStatuses": [
            {
                "name": name,
                "image": image,
                "imageID": "",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": now}},
            }
            for name, image in images.items()
        ],
    }


def finished_status(pod: Mapping[str, Any], final: str, exit_code: int | None = None) -> JSON:
    """The status of a pod whose containers have all exited (`Succeeded` or `Failed`)."""
    if final not in FINISHED:
        raise ValueError(f"phase must be one of {', '.join(FINISHED)}; got {final!r}")
    code = exit_code if exit_code is not None else (0 if final == "Succeeded" else 1)
    now = timestamp()
    status = dict(pod.get("status") or {})
    started = status.get("startTime") or now
    images = {
        c.get("name"): c.get("image", "") for c in (pod.get("spec") or {}).get("containers") or []
    }
    return {
        "phase": final,
        "conditions": _conditions(False, "PodCompleted"),
        "hostIP": status.get("hostIP") or _address(pod, "172.18"),
        "podIP": status.get("podIP") or _address(pod, "10.244"),
        "startTime": started,
        "containerStatuses": [
            {
                "name": name,
                "image": image,
                "imageID": "",
                "ready": False,
                "started": False,
                "restartCount": 0,
                "state": {
                    "terminated": {
                        "exitCode": code,
                        "reason": "Completed" if code == 0 else "Error",
                        "startedAt": started,
                        "finishedAt": now,
                    }
                },
            }
            for name, image in images.items()
        ],
    }


# -- the pod strategy ---------------------------------------------------------------------

POD_FIELDS = {
    "spec.nodeName": "spec.nodeName",
    "spec.restartPolicy": "spec.restartPolicy",
    "spec.schedulerName": "spec.schedulerName",
    "spec.serviceAccountName": "spec.serviceAccountName",
    "spec.hostNetwork": "spec.hostNetwork",
    "status.phase": "status.phase",
    "status.podIP": "status.podIP",
    "status.nominatedNodeName": "status.nominatedNodeName",
}


def _restarts(pod: Mapping[str, Any]) -> int:
    status = pod.get("status") or {}
    return sum(int(c.get("restartCount") or 0) for c in status.get("containerStatuses") or [])


def status_reason(pod: Mapping[str, Any]) -> tuple[str, int, int]:
    """(STATUS, ready containers, containers) as kubectl's pod printer works them out."""
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    reason = status.get("reason") or phase(pod)
    total = len(spec.get("containers") or [])
    ready = 0
    for entry in status.get("initContainerStatuses") or []:
        state = entry.get("state") or {}
        done = state.get("terminated") or {}
        if done and done.get("exitCode", 0) == 0:
            continue
        if done:
            reason = "Init:" + (done.get("reason") or f"ExitCode:{done.get('exitCode')}")
        elif (state.get("waiting") or {}).get("reason", "PodInitializing") != "PodInitializing":
            reason = "Init:" + state["waiting"]["reason"]
        else:
            count = len(spec.get("initContainers") or [])
            index = (status.get("initContainerStatuses") or []).index(entry)
            reason = f"Init:{index}/{count}"
        return reason, 0, total
    running, failed = False, ""
    for entry in reversed(status.get("containerStatuses") or []):
        state = entry.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif "terminated" in state:
            done = state["terminated"] or {}
            reason = done.get("reason") or f"ExitCode:{done.get('exitCode', 0)}"
            if done.get("exitCode", 0):
                failed = reason
        elif entry.get("ready") and "running" in state:
            running = True
            ready += 1
    if reason == "Completed":
        conditions = status.get("conditions") or []
        has_ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
        if running and has_ready:
            reason = "Running"
        elif failed:
            reason = failed
        elif running:
            reason = "NotReady"
    if (pod.get("metadata") or {}).get("deletionTimestamp") and not is_finished(pod):
        reason = "Terminating"
    return reason, ready, total


class PodStrategy(Strategy):
    typed = True
    fields: ClassVar[Mapping[str, str]] = POD_FIELDS

    def default(self, obj: JSON) -> None:
        set_defaults(obj)

    def zero(self) -> JSON:
        return {"spec": {"containers": None}, "status": {}}

    def prepare_create(self, obj: JSON) -> None:
        prepare_for_create(obj)
        admit(obj)

    def prepare_update(self, new: JSON, old: JSON) -> None:
        if "status" in old:
            new["status"] = copy_json(old["status"])

    def validate(self, obj: JSON) -> list[Cause]:
        return validate(obj)

    def validate_update(self, new: JSON, old: JSON) -> list[Cause]:
        return validate(new) + update_causes(old, new)

    def columns(self) -> list[Column]:
        return [
            NAME,
            Column("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
            Column("Status", description="The aggregate status of the containers in this pod."),
            Column("Restarts", description="The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
            AGE,
            Column("IP", priority=1, description="podIP address allocated to the pod."),
            Column("Node", priority=1, description="NodeName indicates in which node this pod is scheduled."),
            Column("Nominated Node", priority=1, description="nominatedNodeName is set only when this pod preempts other pods on the node."),
            Column("Readiness Gates", priority=1, description="If specified, all readiness gates will be evaluated for pod readiness."),
        ]  # fmt: skip

    def cells(self, obj: Mapping[str, Any]) -> list[Any]:
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        status = obj.get("status") or {}
        reason, ready, total = status_reason(obj)
        gates = spec.get("readinessGates") or []
        return [
            meta.get("name", ""),
            f"{ready}/{total}",
            reason,
            str(_restarts(obj)),
            since(meta.get("creationTimestamp")),
            status.get("podIP") or "<none>",
            spec.get("nodeName") or "<none>",
            status.get("nominatedNodeName") or "<none>",
            f"0/{len(gates)}" if gates else "<none>",
        ]


PODS = ResourceType(
    group="",
    plural="pods",
    singular="pod",
    kind="Pod",
    list_kind="PodList",
    namespaced=True,
    versions=(
        Version(name="v1", served=True, storage=True, schema=POD_SCHEMA, status_subresource=True),
    ),
    short_names=("po",),
    categories=("all",),
    strategy=PodStrategy(),
)
