"""Test flarekit code, and your own, without a Kubernetes cluster.

`FakeCluster` is an in-process Kubernetes API server. It listens on HTTPS at 127.0.0.1
(random port), writes a kubeconfig, and answers clients (the official client and its dynamic
client, lightkube, kr8s, kubectl, codeflare-sdk, the Kubeflow SDK) as kube-apiserver v1.36
does: discovery, OpenAPI v2/v3, Table output, health endpoints, CRUD on every served version
of every CRD, the built-in kinds users' code touches (namespaces, pods with their logs,
configmaps, secrets, serviceaccounts, services, events, ingresses) with their strategies,
the review APIs (`can-i`, `whoami`), protobuf request bodies, status and scale subresources,
merge/JSON/strategic merge patches and server-side apply by list type, optimistic
concurrency, label and field selectors, pagination, watches with bookmarks and 410 Expired,
schema defaulting/pruning/validation, field validation modes, dryRun, finalizers, garbage
collection by owner references, bearer tokens with an RBAC-like policy, and real `Status`
error bodies. Pods are bound to simulated nodes but do not run: their status and logs are
what tests and simulated controllers write (`add_pod`, `start_pod`, `append_log`,
`finish_pod`). Tests can inject faults and delays, drop watches and log streams, read the
request log, and seed or drive objects directly::

    from flarekit.testing import FakeCluster

    with FakeCluster(crds=[my_crd]) as fc:
        api = kubernetes.client.CustomObjectsApi(fc.api_client())
        api.create_namespaced_custom_object("example.com", "v1", "default", "widgets", body)
        fc.set_status("widgets", "w1", {"phase": "Ready"})

Not modelled, and the known differences from kube-apiserver, are listed in
docs/fakecluster.md: CEL validation rules, conversion webhooks (other than Kueue's field
renames), admission webhooks and most admission plugins, real operators (there is a
`Controller` seam, and simulated KubeRay, Kueue, Trainer, training-operator and AppWrapper
controllers that are off unless registered), kubelets and container restarts, other built-in
kinds, and authentication other than bearer tokens.
"""

from flarekit.testing._auth import Rule, rule
from flarekit.testing._controllers import Controller
from flarekit.testing._controlplane import ControlPlane, NodePool, NotSupportedByRealServer
from flarekit.testing._cp_assets import AssetsNotFound
from flarekit.testing._cp_process import ComponentFailed
from flarekit.testing._errors import ApiError
from flarekit.testing._faults import FaultRule, RecordedRequest
from flarekit.testing._resources import CRDError
from flarekit.testing._server import FakeCluster
from flarekit.testing._sim_appwrapper import AppWrapperController
from flarekit.testing._sim_base import ManualClock, SimController
from flarekit.testing._sim_kueue import KueueController
from flarekit.testing._sim_pytorchjob import PyTorchJobController
from flarekit.testing._sim_raycluster import RayClusterController
from flarekit.testing._sim_rayjob import RayJobController
from flarekit.testing._sim_trainjob import TrainJobController
from flarekit.testing._store import Event

__all__ = [
    "ApiError",
    "AppWrapperController",
    "AssetsNotFound",
    "CRDError",
    "ComponentFailed",
    "ControlPlane",
    "Controller",
    "Event",
    "FakeCluster",
    "FaultRule",
    "KueueController",
    "ManualClock",
    "NodePool",
    "NotSupportedByRealServer",
    "PyTorchJobController",
    "RayClusterController",
    "RayJobController",
    "RecordedRequest",
    "Rule",
    "SimController",
    "TrainJobController",
    "rule",
]
