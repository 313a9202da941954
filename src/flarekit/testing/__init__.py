"""Test flarekit code, and your own, without a Kubernetes cluster.

`FakeCluster` is an in-process Kubernetes API server for custom resources. It listens on
HTTPS at 127.0.0.1 (random port), writes a kubeconfig, and answers the official `kubernetes`
client as kube-apiserver would: discovery, CRUD on every served version, status and scale
subresources, merge/JSON/apply patches, optimistic concurrency, label and field selectors,
pagination, watches with bookmarks and 410 Expired, schema defaulting/pruning/validation,
field validation modes, dryRun, finalizers, namespaces, bearer tokens with an RBAC-like
policy, and real `Status` error bodies. Pods are served too (CRUD, selectors, watch, status,
the pod strategy's defaults and immutability) with their `log` subresource (plain text,
`follow`, `tailLines`, `timestamps`, `limitBytes`, `since*`): nothing schedules or runs them,
their status and logs are what tests and simulated controllers write (`add_pod`,
`start_pod`, `append_log`, `finish_pod`). Tests can inject faults and delays, drop watches
and log streams, read the request log, and seed or drive objects directly::

    from flarekit.testing import FakeCluster

    with FakeCluster(crds=[my_crd]) as fc:
        api = kubernetes.client.CustomObjectsApi(fc.api_client())
        api.create_namespaced_custom_object("example.com", "v1", "default", "widgets", body)
        fc.set_status("widgets", "w1", {"phase": "Ready"})

Not modelled (see docs/fakecluster.md): CEL validation rules (`x-kubernetes-validations`),
conversion webhooks (objects are stored in the storage version and converted between served
versions by rewriting `apiVersion` only), admission webhooks, real controllers/operators
(there is a `Controller` seam, and simulated KubeRay, Kueue, Trainer, training-operator
(PyTorchJob) and AppWrapper controllers that are off unless registered), garbage collection of dependents (a
`propagationPolicy` is accepted and ignored), full-fidelity server-side apply (ownership is
per map leaf, lists are atomic), built-in resources other than namespaces and pods,
scheduling, kubelets and container restarts, protobuf and table output, and authentication
other than bearer tokens.
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
