"""Direct access for tests, the controller seam, lifecycle, the pytest fixture, and releases."""

from __future__ import annotations

import threading
from typing import Any

import kubernetes
import pytest
from fakecluster_support import GROUP, widget, widget_crd

from flarekit_testing import ApiError, Event, FakeCluster


def test_seeded_objects_look_like_api_objects(api: Any, cluster: FakeCluster, ns: str) -> None:
    seeded = cluster.create({**widget("seed"), "metadata": {"name": "seed", "namespace": ns}})
    assert seeded["metadata"]["uid"] and seeded["spec"]["size"] == 1
    got = api.get_namespaced_custom_object(GROUP, "v1", ns, "widgets", "seed")
    assert got == seeded
    assert cluster.get("widgets", "seed", ns) == seeded
    assert cluster.objects("wd", ns) == [seeded]  # short names work too
    assert cluster.objects("widgets.example.com", ns, version="v1beta1")[0]["apiVersion"] == (
        f"{GROUP}/v1beta1"
    )


def test_direct_writes_are_validated(cluster: FakeCluster, ns: str) -> None:
    with pytest.raises(ApiError) as err:
        cluster.create(
            {**widget("bad", color="pink"), "metadata": {"name": "bad", "namespace": ns}}
        )
    assert err.value.code == 422
    with pytest.raises(ValueError, match="unknown resource 'sprockets'"):
        cluster.objects("sprockets")


def test_set_status_goes_through_the_status_subresource(
    api: Any, cluster: FakeCluster, ns: str
) -> None:
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    out = cluster.set_status("widgets", "a", {"phase": "Running"}, namespace=ns)
    assert out["status"] == {"phase": "Running"}
    assert out["metadata"]["generation"] == 1
    managers = {(m["manager"], m.get("subresource")) for m in out["metadata"]["managedFields"]}
    assert ("flarekit-fakecluster", "status") in managers
    assert api.get_namespaced_custom_object_status(GROUP, "v1", ns, "widgets", "a")["status"] == {
        "phase": "Running"
    }


def test_direct_delete_and_list(cluster: FakeCluster, ns: str) -> None:
    cluster.create({**widget("a"), "metadata": {"name": "a", "namespace": ns}})
    assert [i["metadata"]["name"] for i in cluster.list_response("widgets", ns)["items"]] == ["a"]
    assert cluster.delete("widgets", "a", ns)["status"] == "Success"
    assert cluster.objects("widgets", ns) == []


class _Promoter:
    """A toy controller: marks every new widget Ready."""

    def __init__(self) -> None:
        self.done = threading.Event()

    def on_event(self, cluster: FakeCluster, event: Event) -> None:
        if event.type == "ADDED" and event.key[1] == "widgets":
            cluster.set_status("widgets", event.key[3], {"phase": "Ready"}, namespace=event.key[2])
            self.done.set()

    def on_tick(self, cluster: FakeCluster) -> None:
        pass


def test_controller_seam() -> None:
    with FakeCluster(crds=[widget_crd()]) as fc:
        promoter = _Promoter()
        fc.add_controller(promoter)
        with fc.api_client() as c:
            kubernetes.client.CustomObjectsApi(c).create_namespaced_custom_object(
                GROUP, "v1", "default", "widgets", widget("a")
            )
        assert promoter.done.wait(timeout=10)
        obj = fc.get("widgets", "a")
        assert obj is not None and obj["status"] == {"phase": "Ready"}
        assert fc.controller_errors == []


def test_lifecycle_and_kubeconfig() -> None:
    fc = FakeCluster(crds=[widget_crd()])
    with pytest.raises(RuntimeError, match="not running"):
        _ = fc.kubeconfig_path
    with fc:
        path = fc.kubeconfig_path
        text = path.read_text()
        assert fc.url.startswith("https://127.0.0.1:")
        assert fc.url in text and fc.token in text and "certificate-authority-data" in text
        kubernetes.config.load_kube_config(config_file=str(path))  # loadable by the client
    assert not path.exists()


def test_crds_and_releases_are_exclusive() -> None:
    with pytest.raises(ValueError, match="not both"):
        FakeCluster(crds=[widget_crd()], releases={"kueue": "v0.10.6"})


@pytest.mark.fake_cluster(crds=[widget_crd()])
def test_pytest_fixture(fake_cluster: FakeCluster) -> None:
    with fake_cluster.api_client() as c:
        listed = kubernetes.client.CustomObjectsApi(c).list_namespaced_custom_object(
            GROUP, "v1", "default", "widgets"
        )
    assert listed["items"] == []


def _release_crds_available() -> bool:
    try:
        import flarekit_models._crds  # noqa: F401
    except ImportError:
        return False
    return True


needs_releases = pytest.mark.skipif(
    not _release_crds_available(),
    reason="flarekit_models._crds (generated CRD catalogue) is not built yet; run `make generate`",
)


#: The API groups of the built-in kinds FakeCluster serves besides the core group.
BUILTIN_GROUPS = {
    "authentication.k8s.io",
    "authorization.k8s.io",
    "events.k8s.io",
    "networking.k8s.io",
}


@needs_releases
def test_serves_chosen_releases_only() -> None:
    with FakeCluster(releases={"kueue": "v0.10.6", "kuberay": "v1.1.1"}) as fc:
        groups = {g for g in fc.registry.groups()}
        assert groups - BUILTIN_GROUPS == {"ray.io", "kueue.x-k8s.io"}
        with fc.api_client() as c:
            api = kubernetes.client.CustomObjectsApi(c)
            assert (
                api.list_namespaced_custom_object("ray.io", "v1", "default", "rayclusters")["kind"]
                == "RayClusterList"
            )
            with pytest.raises(kubernetes.client.ApiException) as err:
                api.get_namespaced_custom_object("ray.io", "v1", "default", "rayclusters", "x")
            assert err.value.status == 404


@needs_releases
def test_default_releases() -> None:
    from flarekit_models._crds import crds_for, default_releases

    expected = {c["spec"]["group"] for c in crds_for(default_releases())}
    with FakeCluster() as fc:
        assert set(fc.registry.groups()) - BUILTIN_GROUPS == expected
