"""Objects and calls for the contract suite: Kueue LocalQueues (namespaced, with a status
subresource) and ResourceFlavors (cluster-scoped, without one), Status bodies, raw calls."""

from __future__ import annotations

import json
from typing import Any

import kubernetes
from contract_backend import Cluster

JSON = dict[str, Any]
GROUP = "kueue.x-k8s.io"
LQ = "localqueues"
RF = "resourceflavors"


def api(cluster: Cluster) -> Any:
    return kubernetes.client.CustomObjectsApi(cluster.api_client())


def local_queue(
    cluster: Cluster, name: str, labels: dict[str, str] | None = None, **spec: Any
) -> JSON:
    meta: JSON = {"name": name}
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": f"{GROUP}/{cluster.version(GROUP)}",
        "kind": "LocalQueue",
        "metadata": meta,
        "spec": {"clusterQueue": "contract-cq", **spec},
    }


def create_queue(cluster: Cluster, name: str, **kwargs: Any) -> JSON:
    body = local_queue(cluster, name, **kwargs)
    created: JSON = api(cluster).create_namespaced_custom_object(
        GROUP, cluster.version(GROUP), cluster.namespace, LQ, body
    )
    return created


def resource_flavor(cluster: Cluster, name: str, **spec: Any) -> JSON:
    return {
        "apiVersion": f"{GROUP}/{cluster.version(GROUP)}",
        "kind": "ResourceFlavor",
        "metadata": {"name": name, "labels": cluster.run_label},
        "spec": spec,
    }


def status_of(exc: kubernetes.client.ApiException) -> JSON:
    """The `Status` body of a failed call."""
    body: JSON = json.loads(exc.body)
    return body


def call(
    cluster: Cluster,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "application/json",
    query: list[tuple[str, Any]] | None = None,
) -> Any:
    """A request through `ApiClient.call_api` with an explicit Content-Type (JSON patch,
    apply, strategic merge), which `CustomObjectsApi` cannot choose."""
    return cluster.api_client().call_api(
        path,
        method,
        query_params=query or [],
        header_params={"Content-Type": content_type, "Accept": "application/json"},
        body=body,
        auth_settings=["BearerToken"],
        response_type="object",
        _return_http_data_only=True,
    )


def queue_path(cluster: Cluster, name: str = "") -> str:
    path = f"/apis/{GROUP}/{cluster.version(GROUP)}/namespaces/{cluster.namespace}/{LQ}"
    return f"{path}/{name}" if name else path
