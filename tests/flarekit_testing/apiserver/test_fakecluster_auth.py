"""Bearer tokens (401) and the RBAC-like policy (403 worded as the apiserver)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import kubernetes
import pytest
from fakecluster_support import GROUP, Raw, status_of, widget

from flarekit_testing import FakeCluster, rule

ApiException = kubernetes.client.ApiException


@pytest.fixture(autouse=True)
def _no_denies(cluster: FakeCluster) -> Iterator[None]:
    yield
    cluster.clear_denies()


@pytest.mark.parametrize("token", ["", "wrong-token"])
def test_unauthorized(cluster: FakeCluster, token: str) -> None:
    response = Raw(cluster, token=token)("GET", f"/apis/{GROUP}/v1/namespaces/default/widgets")
    assert response.status == 401
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }


def test_unauthorized_through_the_client(cluster: FakeCluster) -> None:
    with cluster.api_client(token="not-a-token") as c, pytest.raises(ApiException) as err:
        kubernetes.client.CustomObjectsApi(c).list_namespaced_custom_object(
            GROUP, "v1", "default", "widgets"
        )
    assert err.value.status == 401


def test_deny_rule_gives_apiserver_forbidden(api: Any, cluster: FakeCluster, ns: str) -> None:
    cluster.deny(verb="create", resource="widgets")
    with pytest.raises(ApiException) as err:
        api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    status = status_of(err.value)
    assert (err.value.status, status["reason"]) == (403, "Forbidden")
    assert status["message"] == (
        'widgets.example.com is forbidden: User "flarekit-admin" cannot create resource '
        f'"widgets" in API group "example.com" in the namespace "{ns}"'
    )
    assert status["details"] == {"group": GROUP, "kind": "widgets"}
    api.list_namespaced_custom_object(GROUP, "v1", ns, "widgets")  # other verbs still work


def test_forbidden_with_name_and_cluster_scope(api: Any, cluster: FakeCluster) -> None:
    cluster.deny(verb="get", resource="gadgets")
    with pytest.raises(ApiException) as err:
        api.get_cluster_custom_object(GROUP, "v1", "gadgets", "g1")
    assert status_of(err.value)["message"] == (
        'gadgets.example.com "g1" is forbidden: User "flarekit-admin" cannot get resource '
        '"gadgets" in API group "example.com" at the cluster scope'
    )


def test_deny_subresource_only(api: Any, cluster: FakeCluster, ns: str) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    cluster.deny(verb="patch", resource="widgets/status")
    api.patch_namespaced_custom_object(GROUP, "v1", ns, "widgets", "a", {"spec": {"size": 2}})
    with pytest.raises(ApiException) as err:
        api.patch_namespaced_custom_object_status(GROUP, "v1", ns, "widgets", "a", {"status": {}})
    assert 'cannot patch resource "widgets/status"' in status_of(err.value)["message"]


def test_limited_user(cluster: FakeCluster, ns: str) -> None:
    token = cluster.add_user("viewer", allow=[rule(verb=["get", "list", "watch"], namespace=ns)])
    with cluster.api_client(token=token) as c:
        viewer = kubernetes.client.CustomObjectsApi(c)
        assert viewer.list_namespaced_custom_object(GROUP, "v1", ns, "widgets")["items"] == []
        with pytest.raises(ApiException) as err:
            viewer.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
        assert 'User "viewer" cannot create resource' in status_of(err.value)["message"]
        with pytest.raises(ApiException) as err:
            viewer.list_namespaced_custom_object(GROUP, "v1", "default", "widgets")
        assert err.value.status == 403
    assert cluster.requests[-1].user == "viewer"


def test_unknown_verb_in_rule() -> None:
    with pytest.raises(ValueError, match="unknown verb"):
        rule(verb="destroy")


@pytest.mark.parametrize(("scheme", "status"), [("bearer", 200), ("BEARER", 200), ("Basic", 401)])
def test_the_bearer_scheme_is_case_insensitive(
    cluster: FakeCluster, scheme: str, status: int
) -> None:
    import urllib3

    pool = urllib3.PoolManager(ca_certs=cluster.ca_path)
    response = pool.request(
        "GET",
        f"{cluster.url}/apis/{GROUP}/v1/namespaces/default/widgets",
        headers={"Authorization": f"{scheme} {cluster.token}"},
    )
    assert response.status == status
