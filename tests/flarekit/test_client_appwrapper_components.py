"""An AppWrapper holds only the kinds the AppWrapper controller runs, each valid against its
model and meant for the AppWrapper's namespace: anything else is refused before any request,
naming the component and the allowed kinds, unless the caller opts out explicitly."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from client_support import raycluster_body

from flarekit import Client, from_kubeconfig
from flarekit._validation import ConfigError
from flarekit_models.appwrapper.v1beta1 import AppWrapper as McadAppWrapper
from flarekit_models.appwrapper.v1beta2 import AppWrapper
from flarekit_testing import FakeCluster

SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {}}
ADMIN = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRoleBinding",
    "metadata": {"name": "everyone-admin"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
    "subjects": [{"kind": "Group", "name": "system:authenticated"}],
}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "image": "busybox"}]},
}


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    with FakeCluster(releases={"appwrapper": "v1.2.1", "kuberay": "v1.7.0"}) as cluster:
        yield cluster


@pytest.fixture
def client(fc: FakeCluster) -> Iterator[Client]:
    with Client(from_kubeconfig(fc.kubeconfig_path), namespace="default") as c:
        yield c


def wrapper(name: str, *templates: dict[str, Any]) -> AppWrapper:
    return AppWrapper.model_validate(
        {
            "apiVersion": "workload.codeflare.dev/v1beta2",
            "kind": "AppWrapper",
            "metadata": {"name": name},
            "spec": {"components": [{"template": t} for t in templates]},
        }
    )


def _writes(fc: FakeCluster) -> int:
    return sum(1 for r in fc.requests if r.method != "GET")


@pytest.mark.parametrize(
    ("template", "shown"),
    [(SECRET, "v1 Secret"), (ADMIN, "rbac.authorization.k8s.io/v1 ClusterRoleBinding")],
)
def test_kinds_the_controller_does_not_run_are_refused_before_any_request(
    fc: FakeCluster, client: Client, template: dict[str, Any], shown: str
) -> None:
    before = _writes(fc)
    body = wrapper("bad", raycluster_body("rc"), template)
    for write in (client.create, client.apply, client.replace):
        with pytest.raises(ConfigError) as info:
            write(body)
        problem = info.value.problems[0]
        assert problem.field == "spec.components[1].template" and problem.value == shown
        assert "ray.io/v1 RayCluster" in problem.expected and "v1 Pod" in problem.expected
    assert _writes(fc) == before
    assert fc.get("appwrappers", "bad", "default") is None


def test_each_component_is_validated_with_its_model(fc: FakeCluster, client: Client) -> None:
    broken = raycluster_body("rc")
    broken["spec"]["headGroupSpec"]["template"]["spec"]["containers"] = "not a list"
    pod_elsewhere = {**POD, "metadata": {"name": "p", "namespace": "kube-system"}}
    with pytest.raises(ConfigError) as info:
        client.create(wrapper("invalid", broken, pod_elsewhere))
    fields = info.value.fields
    assert any(
        f.startswith("spec.components[0].template.spec.headGroupSpec.template.spec.containers")
        for f in fields
    ), fields
    assert "spec.components[1].template.metadata.namespace" in fields
    assert fc.get("appwrappers", "invalid", "default") is None


def test_supported_kinds_are_written(fc: FakeCluster, client: Client) -> None:
    created = client.create(wrapper("good", raycluster_body("rc"), POD))
    assert created.metadata is not None and created.metadata.uid


def test_the_caller_may_opt_out_explicitly(fc: FakeCluster, client: Client) -> None:
    client.create(wrapper("unchecked", POD, SECRET), check_components=False)
    assert fc.get("appwrappers", "unchecked", "default") is not None


def test_patches_that_add_components_are_checked(fc: FakeCluster, client: Client) -> None:
    client.create(wrapper("patched", POD))
    before = _writes(fc)
    merge = {"spec": {"components": [{"template": SECRET}]}}
    with pytest.raises(ConfigError):
        client.patch(AppWrapper, "patched", merge)
    with pytest.raises(ConfigError):
        client.patch(
            AppWrapper,
            "patched",
            [{"op": "add", "path": "/spec/components/-", "value": {"template": SECRET}}],
            patch_type="json",
        )
    with pytest.raises(ConfigError, match="cannot be checked"):
        client.patch(
            AppWrapper,
            "patched",
            [{"op": "replace", "path": "/spec/components/0/template/kind", "value": "Secret"}],
            patch_type="json",
        )
    assert _writes(fc) == before


def test_mcad_generic_items_follow_the_same_rule(client: Client) -> None:
    body = McadAppWrapper.model_validate(
        {
            "apiVersion": "workload.codeflare.dev/v1beta1",
            "kind": "AppWrapper",
            "metadata": {"name": "mcad"},
            "spec": {"resources": {"GenericItems": [{"generictemplate": SECRET}]}},
        }
    )
    with pytest.raises(ConfigError) as info:
        client.create(body)
    assert info.value.fields == ["spec.resources.GenericItems[0].generictemplate"]
