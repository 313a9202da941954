"""Helpers for FakeCluster tests: tiny hand-written CRDs, objects, raw HTTPS, Status bodies.

Tests talk to the fake only the way users do: the official `kubernetes` client configured
from the kubeconfig FakeCluster writes, or raw HTTPS (urllib3 with the cluster's CA) for what
that client cannot express. Each test gets its own namespace, so a module can share one
running cluster.
"""

from __future__ import annotations

import json
from typing import Any

import kubernetes
import urllib3

from flarekit_testing import FakeCluster

JSON = dict[str, Any]
GROUP = "example.com"


def _schema(required_color: bool = True) -> JSON:
    spec: JSON = {
        "type": "object",
        "properties": {
            "color": {"type": "string", "enum": ["red", "green", "blue"]},
            "size": {"type": "integer", "default": 1, "minimum": 0},
            "replicas": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "extra": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    }
    if required_color:
        spec["required"] = ["color"]
    return {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {
                "spec": spec,
                "status": {
                    "type": "object",
                    "properties": {
                        "phase": {"type": "string"},
                        "replicas": {"type": "integer"},
                        "selector": {"type": "string"},
                    },
                },
            },
        }
    }


def widget_crd() -> JSON:
    """Namespaced; v1 (storage, status + scale) and v1beta1 (served, deprecated)."""
    subresources = {
        "status": {},
        "scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector",
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {
                "plural": "widgets",
                "singular": "widget",
                "kind": "Widget",
                "listKind": "WidgetList",
                "shortNames": ["wd"],
                "categories": ["all", "toys"],
            },
            "versions": [
                {
                    "name": "v1beta1",
                    "served": True,
                    "storage": False,
                    "deprecated": True,
                    "schema": _schema(required_color=False),
                    "subresources": subresources,
                },
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": _schema(),
                    "subresources": subresources,
                },
                {
                    "name": "v1alpha1",
                    "served": False,
                    "storage": False,
                    "schema": _schema(),
                },
            ],
        },
    }


def gadget_crd() -> JSON:
    """Cluster-scoped, no subresources: status is an ordinary field."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Cluster",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                },
                                "status": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


def widget(name: str, color: str = "red", **spec: Any) -> JSON:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"color": color, **spec},
    }


class Raw:
    """HTTPS requests straight to the fake, verified against its CA, with its token."""

    def __init__(self, cluster: FakeCluster, token: str | None = None) -> None:
        self.cluster = cluster
        self.token = cluster.token if token is None else token
        self.pool = urllib3.PoolManager(ca_certs=str(cluster.ca_path), cert_reqs="CERT_REQUIRED")

    def __call__(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        preload: bool = True,
        timeout: float = 10.0,
    ) -> urllib3.BaseHTTPResponse:
        headers = {"Content-Type": content_type, "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
        return self.pool.request(
            method,
            self.cluster.url + path,
            body=data,
            headers=headers,
            preload_content=preload,
            timeout=timeout,
            retries=False,
        )


def status_of(exc: kubernetes.client.ApiException) -> JSON:
    """The Status body of a failed call."""
    body: JSON = json.loads(exc.body)
    return body


def call(
    client: Any,
    method: str,
    path: str,
    body: Any = None,
    content_type: str = "application/json",
    query: list[tuple[str, Any]] | None = None,
) -> Any:
    """A request through ApiClient.call_api with an explicit Content-Type (JSON patch, apply),
    which CustomObjectsApi cannot send: it always patches with a merge patch."""
    return client.call_api(
        path,
        method,
        query_params=query or [],
        header_params={"Content-Type": content_type, "Accept": "application/json"},
        body=body,
        auth_settings=["BearerToken"],
        response_type="object",
        _return_http_data_only=True,
    )
