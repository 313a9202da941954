"""Served-version discovery, LocalQueue resolution and queue labels, on old and new Kueue."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kueue_support import seed_local_queue

from flarekit import Client, ServerError
from flarekit._validation import ConfigError
from flarekit.client import (
    NotServed,
    preferred_kueue_version,
    preferred_version,
    served_versions,
)
from flarekit.kueue import (
    DEFAULT_QUEUE_ANNOTATION,
    PRIORITY_LABEL,
    QUEUE_LABEL,
    QueueNotFound,
    local_queue_names,
    maybe_local_queue,
    queue_labels,
    resolve_local_queue,
)
from flarekit_testing import FakeCluster
from kube_support import client_for


@pytest.fixture(scope="module")
def no_kueue() -> Iterator[FakeCluster]:
    with FakeCluster(releases={"kuberay": "v1.7.0"}) as cluster:
        yield cluster


# -- served versions ------------------------------------------------------------------------


def test_preferred_kueue_version_follows_the_release(fc: FakeCluster, client: Client) -> None:
    served = [v.name for v in fc.resource("workloads").served_versions]
    expected = "v1beta2" if "v1beta2" in served else "v1beta1"
    assert preferred_kueue_version(client) == expected
    assert served_versions(client, "kueue.x-k8s.io")[0] == expected
    assert "v1beta1" in served_versions(client, "kueue.x-k8s.io")


def test_discovery_is_asked_once_per_client(fc: FakeCluster, client: Client) -> None:
    fc.clear_requests()

    def discovery() -> int:  # one aggregated discovery request answers every group
        return fc.request_count("GET", where=lambda r: r.path == "/apis")

    for _ in range(3):
        preferred_kueue_version(client)
        served_versions(client, "kueue.x-k8s.io")
    assert discovery() == 1 and len(fc.requests) == 1
    client.forget()
    preferred_kueue_version(client)
    assert discovery() == 2
    with client_for(fc) as other:  # a new client asks for itself
        preferred_kueue_version(other)
    assert discovery() == 3


def test_group_not_served_names_the_software(no_kueue: FakeCluster) -> None:
    with client_for(no_kueue) as client:
        with pytest.raises(NotServed) as info:
            preferred_kueue_version(client)
        assert str(info.value) == (
            "Kueue is not installed on this cluster (no kueue.x-k8s.io API group)"
        )
        assert info.value.group == "kueue.x-k8s.io"
        with pytest.raises(NotServed, match=r"does not serve the example\.com API group"):
            served_versions(client, "example.com")
        assert served_versions(client, "ray.io")[0] == "v1"


def test_preferred_version_refuses_unknown_versions(client: Client) -> None:
    with pytest.raises(NotServed, match="needs one of v9") as info:
        preferred_version(client, "kueue.x-k8s.io", ["v9"])
    assert "v1beta1" in info.value.served


# -- resolve_local_queue --------------------------------------------------------------------


def test_named_queue_must_exist(fc: FakeCluster, client: Client, ns: str) -> None:
    seed_local_queue(fc, ns, "team-a")
    seed_local_queue(fc, ns, "team-b")
    assert resolve_local_queue(client, ns, "team-b") == "team-b"
    with pytest.raises(QueueNotFound) as info:
        resolve_local_queue(client, ns, "team-c")
    assert info.value.fields == ["local_queue"]
    text = str(info.value)
    assert "no LocalQueue 'team-c'" in text and "'team-a', 'team-b'" in text


def test_missing_queue_in_empty_namespace_says_how_to_get_one(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    with pytest.raises(QueueNotFound, match="has none") as info:
        resolve_local_queue(client, ns, "team-a", field="queue")
    assert info.value.fields == ["queue"]
    with pytest.raises(QueueNotFound, match="has no LocalQueues"):
        resolve_local_queue(client, ns)


def test_invalid_queue_name_is_refused_before_any_request(fc: FakeCluster, client: Client) -> None:
    fc.clear_requests()
    with pytest.raises(ConfigError) as info:
        resolve_local_queue(client, "default", "Team_A")
    assert info.value.fields == ["local_queue"]
    assert fc.requests == []


def test_default_queue_by_kueue_convention(fc: FakeCluster, client: Client, ns: str) -> None:
    seed_local_queue(fc, ns, "other")
    seed_local_queue(fc, ns, "default")
    assert resolve_local_queue(client, ns) == "default"


def test_default_queue_by_codeflare_annotation(fc: FakeCluster, client: Client, ns: str) -> None:
    seed_local_queue(fc, ns, "default")
    seed_local_queue(fc, ns, "gpu", annotations={DEFAULT_QUEUE_ANNOTATION: "True"})
    seed_local_queue(fc, ns, "cpu", annotations={DEFAULT_QUEUE_ANNOTATION: "false"})
    assert resolve_local_queue(client, ns) == "gpu"
    assert local_queue_names(client, ns) == ["cpu", "default", "gpu"]


def test_several_annotated_defaults_are_ambiguous(fc: FakeCluster, client: Client, ns: str) -> None:
    seed_local_queue(fc, ns, "a", annotations={DEFAULT_QUEUE_ANNOTATION: "true"})
    seed_local_queue(fc, ns, "b", annotations={DEFAULT_QUEUE_ANNOTATION: "true"})
    with pytest.raises(QueueNotFound, match="several LocalQueues") as info:
        resolve_local_queue(client, ns)
    assert "'a', 'b'" in str(info.value)


def test_no_default_lists_the_queues(fc: FakeCluster, client: Client, ns: str) -> None:
    seed_local_queue(fc, ns, "team-a")
    with pytest.raises(QueueNotFound, match="no default LocalQueue") as info:
        resolve_local_queue(client, ns)
    assert "local_queue set to one of 'team-a'" in str(info.value)


def test_without_kueue(no_kueue: FakeCluster) -> None:
    with client_for(no_kueue) as client:
        assert maybe_local_queue(client, "default") is None
        with pytest.raises(NotServed):
            maybe_local_queue(client, "default", "team-a")
        with pytest.raises(NotServed):
            resolve_local_queue(client, "default")


# -- labels ---------------------------------------------------------------------------------


def test_queue_labels() -> None:
    assert queue_labels("team-a") == {QUEUE_LABEL: "team-a"}
    assert queue_labels("team-a", "high") == {QUEUE_LABEL: "team-a", PRIORITY_LABEL: "high"}
    assert queue_labels(None, "high") == {PRIORITY_LABEL: "high"}
    assert queue_labels(None) == {}


def test_queue_labels_refuse_bad_names_together() -> None:
    with pytest.raises(ConfigError) as info:
        queue_labels("Bad Queue", "x" * 70)
    assert info.value.fields == ["local_queue", "priority_class"]


def test_named_queue_needs_only_get(fc: FakeCluster, client: Client, ns: str) -> None:
    seed_local_queue(fc, ns, "team-a")
    fc.deny("list", "localqueues")
    try:
        assert resolve_local_queue(client, ns, "team-a") == "team-a"
        with pytest.raises(QueueNotFound) as info:
            resolve_local_queue(client, ns, "team-b")
    finally:
        fc.clear_denies()
    assert f"the name of a LocalQueue in namespace {ns!r}" in str(info.value)


def test_discovery_failure_is_an_api_error(fc: FakeCluster) -> None:
    with client_for(fc) as client:
        fc.inject(lambda r: r.path == "/apis", status=500, times=1)  # aggregated discovery
        try:
            with pytest.raises(ServerError) as info:
                served_versions(client, "kueue.x-k8s.io")
        finally:
            fc.clear_faults()
        assert info.value.code == 500
        assert preferred_kueue_version(client) in ("v1beta1", "v1beta2")  # not cached
