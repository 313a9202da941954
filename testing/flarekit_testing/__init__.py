"""flarekit-testing: test flarekit code, and your own, against a Kubernetes API server that
starts in a second: the emulated `FakeCluster`, or the real `ControlPlane`.

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

    from flarekit_testing import FakeCluster

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

The practice cluster is a FakeCluster with every simulated operator and local execution:
their pods run as processes on this machine where their program can (training functions
under torchrun, RayClusters as real local Ray nodes)::

    from flarekit_testing import FakeCluster, simulated_operators

    with FakeCluster(controllers=simulated_operators(local=True),
                     node_labels=practice_node_labels()) as fc:
        ...
"""

from typing import TYPE_CHECKING

from flarekit_testing._backend import ClusterBackend
from flarekit_testing.apiserver import (
    ApiError,
    Controller,
    CRDError,
    Event,
    FakeCluster,
    FaultRule,
    RecordedRequest,
    Rule,
    rule,
)
from flarekit_testing.controlplane import (
    AssetsNotFound,
    ComponentFailed,
    ControlPlane,
    NodePool,
    NotSupportedByRealServer,
    OperatorNotBuilt,
)
from flarekit_testing.local import LocalKubelet
from flarekit_testing.operators import (
    AppWrapperController,
    KueueController,
    ManualClock,
    PyTorchJobController,
    RayClusterController,
    RayJobController,
    SimController,
    TrainJobController,
    practice_node_labels,
    simulated_operators,
)

__all__ = [
    "ApiError",
    "AppWrapperController",
    "AssetsNotFound",
    "CRDError",
    "ClusterBackend",
    "ComponentFailed",
    "ControlPlane",
    "Controller",
    "Event",
    "FakeCluster",
    "FaultRule",
    "KueueController",
    "LocalKubelet",
    "ManualClock",
    "NodePool",
    "NotSupportedByRealServer",
    "OperatorNotBuilt",
    "PyTorchJobController",
    "RayClusterController",
    "RayJobController",
    "RecordedRequest",
    "Rule",
    "SimController",
    "TrainJobController",
    "practice_node_labels",
    "rule",
    "simulated_operators",
]

if TYPE_CHECKING:  # mypy holds both backends to the protocol here

    def _both_are_backends(fake: FakeCluster, real: ControlPlane) -> list[ClusterBackend]:
        return [fake, real]
