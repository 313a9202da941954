"""Pod templates on both backends: a Ray cluster whose head and workers get affinity, a service
account, a scheduler name and security contexts through the typed pod-template override is
accepted by the API server and made ready by KubeRay, directly and inside an AppWrapper; its
pods carry the settings, and the cluster read back from the server keeps them."""

from __future__ import annotations

from typing import Any

import pytest
from e2e_support import Backend, small_cluster

from flarekit import Client
from flarekit.cluster import (
    Cluster,
    ClusterConfiguration,
    ClusterState,
    get_cluster,
    render_raycluster,
    to_dict,
)
from flarekit_models.core.v1 import (
    Affinity,
    Container,
    PodSecurityContext,
    PodSpec,
    PodTemplateSpec,
    SecurityContext,
)

#: Preferences only: the nodes of either backend need no particular labels to take the pods.
AFFINITY: dict[str, Any] = {
    "nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 10,
                "preference": {
                    "matchExpressions": [
                        {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}
                    ]
                },
            }
        ]
    },
    "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 100,
                "podAffinityTerm": {
                    "topologyKey": "kubernetes.io/hostname",
                    "labelSelector": {"matchLabels": {"ray.io/cluster": "ray"}},
                },
            }
        ]
    },
}
POD_SECURITY = {"runAsNonRoot": True, "runAsUser": 1000, "fsGroup": 1000}
RAY_SECURITY = {"allowPrivilegeEscalation": False}


def _config(namespace: str, lq: str, wrapped: bool) -> ClusterConfiguration:
    head = PodTemplateSpec(
        spec=PodSpec(
            containers=[
                Container(
                    name="ray-head",
                    security_context=SecurityContext(allow_privilege_escalation=False),
                )
            ],
            affinity=Affinity.model_validate(AFFINITY),
            service_account_name="ray",
            scheduler_name="default-scheduler",
            security_context=PodSecurityContext(
                run_as_non_root=True, run_as_user=1000, fs_group=1000
            ),
        )
    )
    workers = {  # the same settings in Kubernetes JSON
        "spec": {
            "containers": [{"name": "ray-worker", "securityContext": RAY_SECURITY}],
            "affinity": AFFINITY,
            "serviceAccountName": "ray",
            "schedulerName": "default-scheduler",
            "securityContext": POD_SECURITY,
        }
    }
    return small_cluster(
        "ray",
        namespace,
        lq,
        appwrapper=wrapped,
        head_pod_template=head,
        worker_pod_template=workers,
    )


def _check_pod_spec(spec: dict[str, Any], what: str) -> None:
    assert spec["serviceAccountName"] == "ray", what
    assert spec["schedulerName"] == "default-scheduler", what
    assert spec["securityContext"] == POD_SECURITY, what
    # Controllers may add terms of their own; ours are all there.
    for kind, terms in AFFINITY.items():
        for field, items in terms.items():
            assert all(t in spec["affinity"][kind][field] for t in items), (what, kind)
    assert spec["containers"][0]["securityContext"] == RAY_SECURITY, what


@pytest.mark.parametrize("wrapped", [False, True], ids=["raycluster", "appwrapper"])
def test_pod_template_settings_reach_the_ray_pods(
    backend: Backend, namespace: str, client: Client, lq: str, wrapped: bool
) -> None:
    account = {"name": "ray", "namespace": namespace}
    backend.cluster.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": account})
    cluster = Cluster(_config(namespace, lq, wrapped), client)
    cluster.apply()
    status = cluster.wait_ready(**backend.waits)
    assert status.state is ClusterState.READY

    [stored] = backend.objects("rayclusters", namespace)
    templates = [stored["spec"]["headGroupSpec"]["template"]]
    templates += [g["template"] for g in stored["spec"]["workerGroupSpecs"]]
    for template in templates:
        _check_pod_spec(template["spec"], "the stored RayCluster")

    def ray_pods() -> list[dict[str, Any]]:
        pods = [
            p
            for p in backend.objects("pods", namespace)
            if (p["metadata"].get("labels") or {}).get("ray.io/cluster") == "ray"
        ]
        return pods if len(pods) >= 2 else []

    pods = backend.wait(ray_pods, "the head and worker pods")
    for pod in pods:
        _check_pod_spec(pod["spec"], f"pod {pod['metadata']['name']}")

    # Read back from the server, the settings are in the pod templates of the configuration.
    again = get_cluster("ray", namespace, client)
    for template in (again.config.head_pod_template, again.config.worker_pod_template):
        assert isinstance(template, PodTemplateSpec)
        assert template.spec is not None
        assert (template.spec.service_account_name, template.spec.scheduler_name) == (
            "ray",
            "default-scheduler",
        )
    # What it renders again keeps them (applying it would not take them away).
    rendered = to_dict(render_raycluster(again.config))["spec"]
    for template in [
        rendered["headGroupSpec"]["template"],
        rendered["workerGroupSpecs"][0]["template"],
    ]:
        _check_pod_spec(template["spec"], "rendered from the configuration read back")

    assert cluster.down(wait=True, **backend.waits)
    backend.wait(lambda: not backend.objects("rayclusters", namespace), "the RayCluster goes")
