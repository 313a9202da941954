"""Pods: the core/v1 resource type, what the apiserver's pod strategy adds, and pod states.

Facade code lists the pods an operator made for a job and reads their logs, so FakeCluster
serves `pods` next to namespaces. The apiserver's pod strategy does a few things the generic
write path does not: a new pod starts `Pending` with a `qosClass`, obvious defaults are filled
in, the spec cannot change after creation (except images and a few scheduling fields), and
containers need a unique name and an image. Nothing schedules or runs pods: their status is
what tests (`add_pod`, `start_pod`, `finish_pod`) and simulated controllers write.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from flarekit.testing._errors import Cause
from flarekit.testing._meta import timestamp
from flarekit.testing._resources import ResourceType, Version
from flarekit.testing._selectors import dns1123_label_errors, go_quote
from flarekit.testing._sim_quantity import parse

JSON = dict[str, Any]

PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
FINISHED = ("Succeeded", "Failed")
DEFAULT_IMAGE = "busybox:1.36"

_OPEN: JSON = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
_CONTAINER: JSON = {
    "type": "object",
    "x-kubernetes-preserve-unknown-fields": True,
    "properties": {
        "name": {"type": "string"},
        "image": {"type": "string"},
        "terminationMessagePath": {"type": "string", "default": "/dev/termination-log"},
        "terminationMessagePolicy": {
            "type": "string",
            "default": "File",
            "enum": ["File", "FallbackToLogsOnError"],
        },
        "resources": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}

#: A small structural schema: the shape of what matters here, and the defaults the apiserver
#: fills in; everything else in spec and status is kept as given.
POD_SCHEMA: JSON = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {
                "containers": {"type": "array", "items": _CONTAINER},
                "initContainers": {"type": "array", "items": _CONTAINER},
                "restartPolicy": {
                    "type": "string",
                    "default": "Always",
                    "enum": ["Always", "OnFailure", "Never"],
                },
                "dnsPolicy": {"type": "string", "default": "ClusterFirst"},
                "schedulerName": {"type": "string", "default": "default-scheduler"},
                "terminationGracePeriodSeconds": {"type": "integer", "default": 30},
                "securityContext": {**_OPEN, "default": {}},
                "nodeName": {"type": "string"},
            },
        },
        "status": _OPEN,
    },
}

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


def prepare_for_create(pod: JSON) -> None:
    """What the pod strategy does to a new pod: `Pending` status with its QoS class, and the
    image pull policy defaulted from each image's tag."""
    given = pod.get("spec")
    spec: JSON = given if isinstance(given, dict) else {}
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            if isinstance(container, dict) and container.get("image"):
                container.setdefault("imagePullPolicy", _pull_policy(str(container["image"])))
    try:
        qos = qos_class(spec)
    except (ValueError, AttributeError):
        qos = "BestEffort"  # validation reports the bad resources
    pod["status"] = {"phase": "Pending", "qosClass": qos}


def _comparable(spec: Mapping[str, Any]) -> JSON:
    out = copy.deepcopy(dict(spec))
    for key in ("containers", "initContainers"):
        for container in out.get(key) or []:
            if isinstance(container, dict):
                container.pop("image", None)
    out.pop("activeDeadlineSeconds", None)
    out.pop("tolerations", None)
    return out


def update_causes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Cause]:
    """A spec change outside what the apiserver allows on a running pod is forbidden."""
    if _comparable(old.get("spec") or {}) == _comparable(new.get("spec") or {}):
        return []
    return [Cause("FieldValueForbidden", SPEC_FORBIDDEN, "spec")]


def strategic_as_merge(current: Mapping[str, Any], patch: Any) -> Any:
    """A strategic merge patch of a pod as a JSON merge patch: container lists are merged by
    `name` (as their patch strategy says) instead of replaced; other lists are replaced."""
    if not isinstance(patch, dict) or not isinstance(patch.get("spec"), dict):
        return patch
    out = copy.deepcopy(patch)
    spec = current.get("spec") or {}
    for key in ("containers", "initContainers"):
        given = out["spec"].get(key)
        if not isinstance(given, list):
            continue
        merged = [copy.deepcopy(c) for c in spec.get(key) or []]
        for item in given:
            name = item.get("name") if isinstance(item, dict) else None
            found = next((c for c in merged if c.get("name") == name), None)
            if found is None:
                merged.append(item)
            else:
                found.update(item)
        out["spec"][key] = merged
    return out


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
