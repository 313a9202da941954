"""Real Ray behind a practice cluster's RayClusters: each head and worker pod is a ``ray start``
process on this machine, started from the RayCluster's rendered spec.

Why: a RayCluster on the practice cluster should be a Ray cluster, with a dashboard that
answers, jobs that run and ``ray.cluster_resources()`` that reports what the spec asked for,
reached through the same objects as on Kubernetes. So a Ray pod's program is the ``ray
start`` KubeRay would give it: the group's ``rayStartParams`` with KubeRay's additions
(``--block``, the metrics port), ``--num-cpus`` from the container's CPU limit (else its
request, rounded up), ``--memory`` from its memory limit, and every other key as given
(``resources``, ``object-store-memory``, ...). What only makes sense in a pod is made local:

- every node's address is ``127.0.0.1`` (``--node-ip-address``), and the dashboard binds
  there too (a dashboard runs any code it is given); the rest of Ray binds as ``ray start``
  does;
- the ports the head Service names (GCS 6379, dashboard 8265, client 10001, metrics 8080)
  and each node's agent and metrics ports are free ports chosen here, so that any number of
  clusters run side by side; `translate` maps the head Service's name and port to them, for
  the pods that connect to the head (workers, a RayJob's submitter);
- each cluster has a temporary folder of its own (Ray's sockets and logs), removed with it.

A head pod is ready once the dashboard reports the GCS healthy, a worker once the dashboard
lists its node alive (KubeRay's readiness probes ask the same).
"""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import socket
import tempfile
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flarekit_testing.apiserver import ApiError, quantity

if TYPE_CHECKING:
    from flarekit_testing.apiserver import FakeCluster

__all__ = ["LocalRay", "RayClusterPorts", "ray_start_params"]

JSON = dict[str, Any]
#: The head Service ports KubeRay names, by their default numbers.
SERVICE_PORTS = {6379: "gcs", 8265: "dashboard", 10001: "client", 8080: "metrics"}
#: Says on the dashboard's Ingress that the practice cluster serves it locally.
EXPOSED_ANNOTATION = "flarekit.dev/local"
_MIN_OBJECT_STORE = 100 * 2**20
_MAX_OBJECT_STORE = 2 * 2**30


def free_port() -> int:
    """A TCP port nothing listens on at the moment (on the loopback address)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class RayClusterPorts:
    """The local ports and folder of one RayCluster."""

    gcs: int = field(default_factory=free_port)
    dashboard: int = field(default_factory=free_port)
    client: int = field(default_factory=free_port)
    metrics: int = field(default_factory=free_port)
    temp_dir: Path = field(
        default_factory=lambda: Path(
            tempfile.mkdtemp(prefix="fkray-", dir="/tmp" if Path("/tmp").is_dir() else None)
        )
    )

    def by_service_port(self, port: int) -> int | None:
        name = SERVICE_PORTS.get(port)
        return int(getattr(self, name)) if name is not None else None

    @property
    def dashboard_url(self) -> str:
        return f"http://127.0.0.1:{self.dashboard}"


def _cpu_of(resources: Mapping[str, Any]) -> str | None:
    for section in ("limits", "requests"):
        value = (resources.get(section) or {}).get("cpu")
        if value not in (None, 0, "0"):
            return str(math.ceil(quantity.parse(value)))
    return None


def ray_start_params(
    group: Mapping[str, Any], container: Mapping[str, Any], head: bool
) -> dict[str, str]:
    """The ``ray start`` parameters KubeRay v1.4 renders for a group's Ray container."""
    params = {str(k): str(v) for k, v in (group.get("rayStartParams") or {}).items()}
    resources = container.get("resources") or {}
    if "num-cpus" not in params and _cpu_of(resources) is not None:
        params["num-cpus"] = str(_cpu_of(resources))
    memory = (resources.get("limits") or {}).get("memory")
    if "memory" not in params and memory not in (None, 0, "0"):
        params["memory"] = str(math.ceil(quantity.parse(memory)))
    params.setdefault("metrics-export-port", "8080")
    if head:
        params.setdefault("dashboard-host", "0.0.0.0")
    params["block"] = "true"
    return params


def _flags(params: Mapping[str, str]) -> list[str]:
    """KubeRay's rendering: ``--key=value``, booleans as bare flags (``false`` left out)."""
    out = []
    for key in sorted(params):
        value = params[key].strip("'\"") if key == "resources" else params[key]
        if value.lower() in ("true", "false") and key not in ("log-color", "include-dashboard"):
            if value.lower() == "true":
                out.append(f"--{key}")
        else:
            out.append(f"--{key}={value}")
    return out


def _get_json(url: str, timeout: float = 2.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:  # our own dashboard
        return json.load(response)


class LocalRay:
    """The local Ray clusters of one practice cluster, by (namespace, RayCluster name)."""

    def __init__(self) -> None:
        self._clusters: dict[tuple[str, str], RayClusterPorts] = {}
        self._lock = threading.Lock()

    def ports(self, namespace: str, cluster: str) -> RayClusterPorts:
        """The cluster's ports and folder, chosen when first asked for."""
        with self._lock:
            found = self._clusters.get((namespace, cluster))
            if found is None:
                found = self._clusters[(namespace, cluster)] = RayClusterPorts()
            return found

    def known(self, namespace: str, cluster: str) -> RayClusterPorts | None:
        with self._lock:
            return self._clusters.get((namespace, cluster))

    def forget(self, namespace: str, cluster: str) -> None:
        """The cluster is gone: its folder goes too."""
        with self._lock:
            found = self._clusters.pop((namespace, cluster), None)
        if found is not None:
            shutil.rmtree(found.temp_dir, ignore_errors=True)

    def close(self) -> None:
        for namespace, cluster in list(self._clusters):
            self.forget(namespace, cluster)

    # -- pods -----------------------------------------------------------------------------------

    def node_argv(self, raycluster: Mapping[str, Any], pod: Mapping[str, Any]) -> list[str]:
        """The ``ray start`` command line of a head or worker pod, made local."""
        meta = raycluster["metadata"]
        ports = self.ports(str(meta["namespace"]), str(meta["name"]))
        labels = pod["metadata"].get("labels") or {}
        head = labels.get("ray.io/node-type") == "head"
        spec = raycluster.get("spec") or {}
        if head:
            group: Mapping[str, Any] = spec.get("headGroupSpec") or {}
        else:
            group = next(
                (g for g in spec.get("workerGroupSpecs") or []
                 if g.get("groupName") == labels.get("ray.io/group")),
                {},
            )  # fmt: skip
        container = ((pod.get("spec") or {}).get("containers") or [{}])[0]
        params = ray_start_params(group, container, head)
        memory = params.get("memory")
        if "object-store-memory" not in params:
            budget = int(int(memory) * 0.3) if memory else _MAX_OBJECT_STORE
            params["object-store-memory"] = str(
                min(max(budget, _MIN_OBJECT_STORE), _MAX_OBJECT_STORE)
            )
        params.update(
            {
                "node-ip-address": "127.0.0.1",
                "node-name": str(pod["metadata"]["name"]),
                "metrics-export-port": str(ports.metrics if head else free_port()),
                "dashboard-agent-listen-port": str(free_port()),
                "dashboard-agent-grpc-port": str(free_port()),
                "runtime-env-agent-port": str(free_port()),
                "disable-usage-stats": "true",
            }
        )
        if head:
            params.pop("address", None)
            params.update(
                {
                    "port": str(ports.gcs),
                    "dashboard-host": "127.0.0.1",
                    "dashboard-port": str(ports.dashboard),
                    "ray-client-server-port": str(ports.client),
                    "temp-dir": str(ports.temp_dir),
                }
            )
        else:
            params["address"] = f"127.0.0.1:{ports.gcs}"
        prefix = ["ray", "start", "--head"] if head else ["ray", "start"]
        return [*prefix, *_flags(params)]

    def node_env(self, raycluster: Mapping[str, Any]) -> dict[str, str]:
        """What KubeRay tells a Ray container about its cluster, made local."""
        meta = raycluster["metadata"]
        ports = self.ports(str(meta["namespace"]), str(meta["name"]))
        return {
            "RAY_CLUSTER_NAME": str(meta["name"]),
            "RAY_IP": "127.0.0.1",
            "RAY_PORT": str(ports.gcs),
            "RAY_ADDRESS": f"127.0.0.1:{ports.gcs}",
            "RAY_USAGE_STATS_ENABLED": "0",
        }

    def ready(self, namespace: str, cluster: str, pod: Mapping[str, Any]) -> bool:
        """KubeRay's readiness probe, asked of the local dashboard: the head once the GCS is
        healthy, a worker once its node is alive."""
        ports = self.known(namespace, cluster)
        if ports is None:
            return False
        head = (pod["metadata"].get("labels") or {}).get("ray.io/node-type") == "head"
        try:
            if head:
                with urllib.request.urlopen(f"{ports.dashboard_url}/api/gcs_healthz", timeout=2):
                    return True
            summary = _get_json(f"{ports.dashboard_url}/nodes?view=summary")
        except (OSError, ValueError):
            return False
        name = str(pod["metadata"]["name"])
        for node in (summary.get("data") or {}).get("summary") or []:
            raylet = node.get("raylet") or {}
            if raylet.get("state") == "ALIVE" and name in (
                raylet.get("nodeName"),
                node.get("nodeName"),
                raylet.get("nodeManagerHostname"),
            ):
                return True
        return False

    # -- reaching a cluster ---------------------------------------------------------------------

    def translate(self, namespace: str, host: str, port: int) -> tuple[str, int] | None:
        """A head Service's address (``<svc>``, ``<svc>.<ns>``, ``...svc.cluster.local``) and
        port as the local cluster serves it, or None when it is no local cluster's."""
        name = host.split(".")[0]
        if not name.endswith("-head-svc"):
            return None
        parts = host.split(".")
        ns = parts[1] if len(parts) > 1 else namespace
        ports = self.known(ns, name[: -len("-head-svc")])
        local = ports.by_service_port(port) if ports is not None else None
        return ("127.0.0.1", local) if local is not None else None

    def job_info(self, namespace: str, cluster: str, job_id: str) -> JSON | None:
        """What the dashboard reports of a job (None when it does not know it)."""
        ports = self.known(namespace, cluster)
        if ports is None:
            return None
        try:
            found = _get_json(f"{ports.dashboard_url}/api/jobs/{job_id}")
        except urllib.error.HTTPError:
            return None
        except (OSError, ValueError):
            return None
        return found if isinstance(found, dict) else None

    def expose(self, fake: FakeCluster, raycluster: Mapping[str, Any]) -> None:
        """Expose the local dashboard as a platform does (OpenShift AI with a Route, others
        with an Ingress): an Ingress ``<cluster>-dashboard`` to the head Service's dashboard
        port, owned by the cluster, whose status gives the address it answers at
        (``127.0.0.1`` and the local port), so that `Cluster.cluster_dashboard_uri()`,
        `RayJobClient` and ``flarekit ray job --cluster`` find it."""
        meta = raycluster["metadata"]
        namespace, name = str(meta["namespace"]), str(meta["name"])
        ports = self.known(namespace, name)
        ingress_name = f"{name}-dashboard"
        if ports is None or fake.get("ingresses", ingress_name, namespace) is not None:
            return
        service = ((raycluster.get("spec") or {}).get("headGroupSpec") or {}).get(
            "headService"
        ) or {}
        service_name = (service.get("metadata") or {}).get("name") or f"{name}-head-svc"
        backend = {"service": {"name": service_name, "port": {"number": 8265}}}
        try:
            fake.create(
                {
                    "apiVersion": "networking.k8s.io/v1",
                    "kind": "Ingress",
                    "metadata": {
                        "name": ingress_name,
                        "namespace": namespace,
                        "labels": {"ray.io/cluster": name},
                        "annotations": {
                            EXPOSED_ANNOTATION: "the practice cluster serves this Ray "
                            f"cluster's dashboard on this machine, at {ports.dashboard_url}"
                        },
                        "ownerReferences": [
                            {
                                "apiVersion": raycluster["apiVersion"],
                                "kind": "RayCluster",
                                "name": name,
                                "uid": meta["uid"],
                                "controller": False,
                                "blockOwnerDeletion": True,
                            }
                        ],
                    },
                    "spec": {
                        "rules": [
                            {
                                "http": {
                                    "paths": [
                                        {"path": "/", "pathType": "Prefix", "backend": backend}
                                    ]
                                }
                            }
                        ]
                    },
                }
            )
            balancer = {"ingress": [
                {"ip": "127.0.0.1", "ports": [{"port": ports.dashboard, "protocol": "TCP"}]}
            ]}  # fmt: skip
            fake.set_status("ingresses", ingress_name, {"loadBalancer": balancer}, namespace)
        except ApiError as exc:
            if exc.code not in (404, 409):  # the namespace is going, or it exists already
                raise

    def submit_job(self, namespace: str, cluster: str, body: Mapping[str, Any]) -> None:
        """Submit a job through the dashboard's Jobs API (a failure shows in `job_info`)."""
        ports = self.known(namespace, cluster)
        if ports is None:
            return
        request = urllib.request.Request(
            f"{ports.dashboard_url}/api/jobs/",
            method="POST",
            data=json.dumps(dict(body)).encode(),
            headers={"Content-Type": "application/json"},
        )
        with contextlib.suppress(OSError):
            urllib.request.urlopen(request, timeout=30).close()

    def stop_job(self, namespace: str, cluster: str, job_id: str) -> None:
        ports = self.known(namespace, cluster)
        if ports is None:
            return
        request = urllib.request.Request(
            f"{ports.dashboard_url}/api/jobs/{job_id}/stop", method="POST", data=b""
        )
        with contextlib.suppress(OSError):
            urllib.request.urlopen(request, timeout=5).close()
