"""RayJob(cluster_name=...): the RayCluster must exist before anything is created."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest
from rayjob_support import RAYJOBS, existing_cluster

from flarekit import Client
from flarekit.cluster import ConfigError
from flarekit.job import RayJob
from flarekit_testing import FakeCluster


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    """KubeRay served, no controllers: objects stay as written."""
    with FakeCluster(releases={"kuberay": "v1.7.0"}) as cluster:
        yield cluster


def _posts(fc: FakeCluster) -> int:
    return sum(1 for r in fc.requests if r.method == "POST")


def _cluster_gets(fc: FakeCluster, ns: str, name: str) -> int:
    path = f"/apis/ray.io/v1/namespaces/{ns}/rayclusters/{name}"
    return sum(1 for r in fc.requests if r.method == "GET" and r.path == path)


def test_a_missing_cluster_is_refused_listing_those_there(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    existing_cluster(fc, ns, "beta")
    existing_cluster(fc, ns, "alpha")
    job = RayJob("lost", "python a.py", namespace=ns, cluster_name="ghost", client=client)
    before = _posts(fc)
    with pytest.raises(ConfigError) as caught:
        job.submit()
    assert caught.value.fields == ["cluster_name"]
    text = str(caught.value)
    assert "cluster_name='ghost'" in text
    assert f"no RayCluster of that name in namespace '{ns}'" in text
    assert "the RayClusters there: alpha, beta;" in text
    assert _posts(fc) == before
    assert fc.objects(RAYJOBS, ns) == []


def test_a_namespace_without_clusters_says_none(fc: FakeCluster, client: Client, ns: str) -> None:
    job = RayJob("lost", "python a.py", namespace=ns, cluster_name="ghost", client=client)
    with pytest.raises(ConfigError, match="the RayClusters there: none;"):
        job.submit()
    assert fc.objects(RAYJOBS, ns) == []


def test_an_existing_cluster_takes_one_get(fc: FakeCluster, client: Client, ns: str) -> None:
    existing_cluster(fc, ns, "shared")
    job = RayJob("found", "python a.py", namespace=ns, cluster_name="shared", client=client)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        job.submit()
    assert _cluster_gets(fc, ns, "shared") == 1
    stored = fc.get(RAYJOBS, "found", ns)
    assert stored is not None
    assert stored["spec"]["clusterSelector"] == {"ray.io/cluster": "shared"}


def test_a_forbidden_read_warns_and_submits(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.deny("get", "rayclusters", ns)
    try:
        job = RayJob("blind", "python a.py", namespace=ns, cluster_name="maybe", client=client)
        with pytest.warns(UserWarning, match=r"cluster_name='maybe'.*forbidden.*anyway") as seen:
            job.submit()
    finally:
        fc.clear_denies()
    assert seen[0].filename == __file__  # it points at the user's submit() line
    assert _cluster_gets(fc, ns, "maybe") == 1  # it asked, and was refused
    assert fc.get(RAYJOBS, "blind", ns) is not None


def test_a_forbidden_listing_still_names_the_missing_cluster(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    fc.deny("list", "rayclusters", ns)
    try:
        job = RayJob("lost", "python a.py", namespace=ns, cluster_name="ghost", client=client)
        with pytest.raises(ConfigError) as caught:
            job.submit()
    finally:
        fc.clear_denies()
    assert caught.value.fields == ["cluster_name"]
    assert "unknown (listing RayClusters is forbidden)" in str(caught.value)
    assert fc.objects(RAYJOBS, ns) == []
