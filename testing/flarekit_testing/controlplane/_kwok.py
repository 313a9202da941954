"""Fake nodes for the control plane, and what happens to the pods scheduled onto them.

KWOK (sigs.k8s.io/kwok) plays every kubelet: the nodes are real Node objects with the capacity
you choose (cpu, memory, pods, `nvidia.com/gpu`), so the real scheduler places pods and Kueue
counts real quota; KWOK then moves each pod through its life by patching its status, as a
kubelet would report it. Nothing runs in the pods: they are simulated, and the status says
what the stages below make it say.

The life of a pod on a fake node (KWOK "stages", written here as flarekit's own configuration):

- scheduled -> Running and Ready, with a pod IP from the control plane's pod range;
- a pod owned by a batch Job (Jobs, JobSets, TrainJobs, RayJob submitters) or by a
  training-operator PyTorchJob (whose replicas are pods of its own) then completes:
  `Succeeded` with exit code 0, after `pod_run_time` (default one second), unless one of its
  containers sets the environment variable `FLAREKIT_SIMULATED_EXIT_CODE` to a non-zero
  number: then it is `Failed` with that exit code. `FLAREKIT_SIMULATED_DURATION` (a Go
  duration such as `5s`) overrides the run time per pod. Other pods (Ray heads and workers,
  bare pods) keep running;
- a pod being deleted is removed at once, as after a kubelet's graceful shutdown (its
  finalizers, if any, still hold it until their owners remove them).

Logs: the nodes report KWOK's server as their kubelet endpoint, so the API server's
`pods/log` reaches it as it would reach a kubelet, and KWOK answers for every container with
the same text (:data:`SIMULATED_LOG`, a KWOK `ClusterLogs` rule): that the pod is simulated and
no process ran in it. Nothing else is invented: no container of these pods prints anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from flarekit_testing.operators import DURATION_ENV, EXIT_CODE_ENV

JSON = dict[str, Any]
NODE_LABEL = "flarekit.dev/simulated-node"
#: What every container on a fake node has in its log (KWOK serves it as the kubelet would).
SIMULATED_LOG = (
    "[simulated pod] This pod ran on a KWOK node of flarekit's test control plane: its "
    "containers were never started, so they wrote no output.",
)


@dataclass(frozen=True)
class NodePool:
    """`count` identical fake nodes. Quantities are Kubernetes quantities."""

    count: int = 2
    cpu: str = "16"
    memory: str = "64Gi"
    gpus: int = 4
    pods: int = 110
    name: str = "node"
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Mapping[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ValueError(f"NodePool.count must be >= 0, got {self.count}")
        if self.gpus < 0:
            raise ValueError(f"NodePool.gpus must be >= 0, got {self.gpus}")

    def manifests(self) -> list[JSON]:
        capacity: dict[str, str] = {
            "cpu": self.cpu,
            "memory": self.memory,
            "pods": str(self.pods),
            "ephemeral-storage": "500Gi",
        }
        if self.gpus:
            capacity["nvidia.com/gpu"] = str(self.gpus)
        nodes = []
        for index in range(self.count):
            name = f"{self.name}-{index}"
            nodes.append(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {
                        "name": name,
                        "labels": {
                            "kubernetes.io/hostname": name,
                            "kubernetes.io/os": "linux",
                            "kubernetes.io/arch": "amd64",
                            "type": "kwok",
                            NODE_LABEL: "true",
                            **dict(self.labels),
                        },
                        "annotations": {"kwok.x-k8s.io/node": "fake"},
                    },
                    "spec": {"taints": [dict(t) for t in self.taints]} if self.taints else {},
                    "status": {"capacity": capacity, "allocatable": dict(capacity)},
                }
            )
        return nodes


def _stage(name: str, kind: str, expressions: list[JSON], nxt: JSON, **extra: Any) -> JSON:
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": name},
        "spec": {
            "resourceRef": {"apiGroup": "v1", "kind": kind},
            "selector": {"matchExpressions": expressions},
            "next": nxt,
            **extra,
        },
    }


def _expr(key: str, operator: str, *values: str) -> JSON:
    out: JSON = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


_NOT_DELETING = _expr(".metadata.deletionTimestamp", "DoesNotExist")
_OWNED_BY_JOB = _expr(".metadata.ownerReferences.[].kind", "In", "Job", "PyTorchJob")
_EXIT_CODE = f'.spec.containers.[].env.[] | select(.name == "{EXIT_CODE_ENV}") | .value'

_NODE_READY = """\
{{ $now := Now }}
conditions:
{{ range NodeConditions }}
- lastHeartbeatTime: {{ $now | Quote }}
  lastTransitionTime: {{ $now | Quote }}
  message: {{ .message | Quote }}
  reason: {{ .reason | Quote }}
  status: {{ .status | Quote }}
  type: {{ .type | Quote }}
{{ end }}
addresses:
- address: {{ NodeIP | Quote }}
  type: InternalIP
- address: {{ .metadata.name | Quote }}
  type: Hostname
{{ with NodePort }}
daemonEndpoints:
  kubeletEndpoint:
    Port: {{ . }}
{{ end }}
allocatable:
{{ YAML .status.allocatable 1 }}
capacity:
{{ YAML .status.capacity 1 }}
nodeInfo:
  architecture: amd64
  operatingSystem: linux
  kubeletVersion: {{ printf "kwok-%s" Version | Quote }}
  kernelVersion: {{ printf "kwok-%s" Version | Quote }}
  containerRuntimeVersion: {{ printf "kwok-%s" Version | Quote }}
  osImage: "simulated by kwok"
  bootID: ""
  machineID: ""
  systemUUID: ""
phase: Running
"""

_POD_RUNNING = """\
{{ $now := Now }}
conditions:
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: PodReadyToStartContainers
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: Initialized
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: Ready
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: ContainersReady
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: PodScheduled
{{ range .spec.readinessGates }}
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: {{ .conditionType | Quote }}
{{ end }}
containerStatuses:
{{ range .spec.containers }}
- image: {{ .image | Quote }}
  imageID: ""
  name: {{ .name | Quote }}
  ready: true
  started: true
  restartCount: 0
  state:
    running:
      startedAt: {{ $now | Quote }}
{{ end }}
{{ with .spec.initContainers }}
initContainerStatuses:
{{ range . }}
- image: {{ .image | Quote }}
  imageID: ""
  name: {{ .name | Quote }}
  ready: true
  restartCount: 0
  state:
    terminated:
      exitCode: 0
      reason: Completed
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
{{ end }}
{{ end }}
{{ $hostIPs := NodeIPsWith .spec.nodeName }}
{{ with $hostIPs }}
hostIP: {{ index . 0 | Quote }}
hostIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
{{ $podIPs := PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) \
( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
{{ with $podIPs }}
podIP: {{ index . 0 | Quote }}
podIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
phase: Running
startTime: {{ $now | Quote }}
"""


def _pod_finished(phase: str) -> str:
    """A finished pod's status: every container terminated with the pod's exit code (0 when
    it succeeds, else the value of `FLAREKIT_SIMULATED_EXIT_CODE`)."""
    reason = "Completed" if phase == "Succeeded" else "Error"
    exit_code = (
        "{{ $code := 0 }}"
        if phase == "Succeeded"
        else "{{ $code := 1 }}{{ range .spec.containers }}{{ range .env }}"
        f'{{{{ if eq .name "{EXIT_CODE_ENV}" }}}}{{{{ $code = .value }}}}{{{{ end }}}}'
        "{{ end }}{{ end }}"
    )
    return exit_code + """
{{ $now := Now }}
conditions:
- lastTransitionTime: {{ $now | Quote }}
  status: "False"
  type: Ready
  reason: PodCompleted
- lastTransitionTime: {{ $now | Quote }}
  status: "False"
  type: ContainersReady
  reason: PodCompleted
containerStatuses:
{{ range .spec.containers }}
- image: {{ .image | Quote }}
  imageID: ""
  name: {{ .name | Quote }}
  ready: false
  started: false
  restartCount: 0
  state:
    terminated:
      exitCode: {{ $code }}
      reason: REASON
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
{{ end }}
phase: PHASE
""".replace("REASON", reason).replace("PHASE", phase)


def stages(pod_run_time: float) -> list[JSON]:
    """The stages KWOK applies to the control plane's nodes and pods (see the module doc)."""
    run_ms = max(0, int(pod_run_time * 1000))
    delay = {
        "durationMilliseconds": run_ms,
        "durationFrom": {
            "expressionFrom": f'.spec.containers.[].env.[] | select(.name == "{DURATION_ENV}") '
            "| .value"
        },
    }
    running = _expr(".status.phase", "In", "Running")
    return [
        _stage(
            "flarekit-node-ready",
            "Node",
            [
                _expr(
                    '.status.conditions.[] | select( .type == "Ready" ) | .status', "NotIn", "True"
                )
            ],
            {"statusTemplate": _NODE_READY},
        ),
        _stage(
            "flarekit-pod-running",
            "Pod",
            [
                _NOT_DELETING,
                _expr(".status.phase", "In", "Pending"),
                _expr(
                    '.status.conditions.[] | select( .type == "Ready" ) | .status', "NotIn", "True"
                ),
            ],
            {"statusTemplate": _POD_RUNNING},
        ),
        _stage(
            "flarekit-pod-succeeded",
            "Pod",
            [_NOT_DELETING, running, _OWNED_BY_JOB, _expr(_EXIT_CODE, "DoesNotExist")],
            {"statusTemplate": _pod_finished("Succeeded")},
            delay=delay,
        ),
        _stage(
            "flarekit-pod-succeeded-explicitly",
            "Pod",
            [_NOT_DELETING, running, _OWNED_BY_JOB, _expr(_EXIT_CODE, "In", "0")],
            {"statusTemplate": _pod_finished("Succeeded")},
            delay=delay,
        ),
        _stage(
            "flarekit-pod-failed",
            "Pod",
            [
                _NOT_DELETING,
                running,
                _OWNED_BY_JOB,
                _expr(_EXIT_CODE, "Exists"),
                _expr(_EXIT_CODE, "NotIn", "0"),
            ],
            {"statusTemplate": _pod_finished("Failed")},
            delay=delay,
        ),
        _stage(
            "flarekit-pod-removed",
            "Pod",
            [_expr(".metadata.deletionTimestamp", "Exists")],
            {"delete": True},
        ),
    ]


def write_simulated_log(path: Path) -> Path:
    """The log file KWOK serves for every container, in the container runtime's log format
    (a kubelet reads the same format); its lines carry the time they were written."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    path.write_text("".join(f"{now} stdout F {line}\n" for line in SIMULATED_LOG))
    return path


def cluster_logs(log_file: Path) -> JSON:
    """A KWOK `ClusterLogs` rule: every container of every pod logs `log_file`."""
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "ClusterLogs",
        "metadata": {"name": "flarekit-simulated-pods"},
        "spec": {"selector": {}, "logs": [{"logsFile": str(log_file)}]},
    }


def configuration(pod_run_time: float, log_file: Path | None = None) -> str:
    """KWOK's configuration file: the stages (and, with `log_file`, the logs rule), as one
    YAML stream (its options keep their defaults; the command line sets the rest)."""
    documents = stages(pod_run_time)
    if log_file is not None:
        documents.append(cluster_logs(log_file))
    return yaml.safe_dump_all(documents, sort_keys=False)
