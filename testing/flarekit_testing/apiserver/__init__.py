"""The Kubernetes API emulator: `FakeCluster`, an in-process kube-apiserver on 127.0.0.1.

It serves discovery, OpenAPI, CRUD with real `Status` errors, patches and server-side apply,
selectors, pagination, watches, schema validation with defaulting and pruning, finalizers,
bearer-token auth with an RBAC-like policy, fault injection and a request log (see
docs/fakecluster.md). Simulated operators plug in through the `Controller` seam and bring
their admission webhooks through `AdmissionWebhook`; `pods` and `quantity` are the pod and
resource-quantity rules they share with the emulator.
"""

from flarekit_testing.apiserver import pods, quantity
from flarekit_testing.apiserver._admission import (
    AdmissionRequest,
    AdmissionWebhook,
    decode_error,
    denied,
)
from flarekit_testing.apiserver._auth import Rule, rule
from flarekit_testing.apiserver._controllers import Controller, ControllerFailure, claim_failures
from flarekit_testing.apiserver._errors import ApiError
from flarekit_testing.apiserver._faults import FaultRule, RecordedRequest
from flarekit_testing.apiserver._resources import CRDError, ResourceType, Version
from flarekit_testing.apiserver._server import INITIAL_NAMESPACES, FakeCluster, release_crds
from flarekit_testing.apiserver._store import Event
from flarekit_testing.apiserver._tls import make_ca, write_kubeconfig

__all__ = [
    "INITIAL_NAMESPACES",
    "AdmissionRequest",
    "AdmissionWebhook",
    "ApiError",
    "CRDError",
    "Controller",
    "ControllerFailure",
    "Event",
    "FakeCluster",
    "FaultRule",
    "RecordedRequest",
    "ResourceType",
    "Rule",
    "Version",
    "claim_failures",
    "decode_error",
    "denied",
    "make_ca",
    "pods",
    "quantity",
    "release_crds",
    "rule",
    "write_kubeconfig",
]
