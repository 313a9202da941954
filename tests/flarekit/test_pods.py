"""flarekit.client._pods against FakeCluster: listing a job's pods, reading and following logs,
resuming dropped streams without repeats, and errors as flarekit's classes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flarekit import Client
from flarekit.client._errors import ApiError, ApiUnavailable, NotFound
from flarekit.client._pods import PodInfo, follow_logs, list_pods, read_logs
from flarekit_testing import FakeCluster
from wait_support import wait_until


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    with FakeCluster(crds=[]) as cluster:
        yield cluster


def test_list_pods_reads_roles_and_indexes(fc: FakeCluster, client: Client, ns: str) -> None:
    node = "jobset.sigs.k8s.io/replicatedjob-name"
    index = "batch.kubernetes.io/job-completion-index"
    fc.add_pod(ns, "n1", labels={"job": "j", node: "node", index: "1"}, phase="Running")
    fc.add_pod(ns, "n0", labels={"job": "j", node: "node", index: "0"})
    fc.add_pod(
        ns, "m0", labels={"job": "j", "training.kubeflow.org/replica-type": "master",
                          "training.kubeflow.org/replica-index": "0"},
        containers=["pytorch", "sidecar"],
        annotations={"kubectl.kubernetes.io/default-container": "sidecar"},
    )  # fmt: skip
    fc.add_pod(ns, "other", labels={"job": "k"})
    pods = list_pods(client, ns, {"job": "j"})
    assert [(p.name, p.role, p.index) for p in pods] == [
        ("m0", "master", 0), ("n0", "node", 0), ("n1", "node", 1),
    ]  # fmt: skip
    assert pods[2].phase == "Running" and pods[1].phase == "Pending"
    assert pods[0].containers == ("pytorch", "sidecar")
    assert pods[0].default_container == "sidecar" and pods[1].default_container == "main"
    assert pods[1].labels[index] == "0" and pods[1].created
    assert list_pods(client, ns, "job in (k)")[0].name == "other"
    assert list_pods(client, ns, "job=none") == []


def test_pod_info_tolerates_missing_fields() -> None:
    info = PodInfo.from_dict({"metadata": {"name": "x"}})
    assert (info.phase, info.containers, info.role, info.index) == ("Pending", (), None, None)
    assert info.default_container is None and not info.finished


def test_read_logs_whole_and_tail(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.add_pod(ns, "p", phase="Running")
    fc.append_log(ns, "p", "a\nb\nc")
    assert read_logs(client, ns, "p") == "a\nb\nc\n"
    assert read_logs(client, ns, "p", tail=1) == "c\n"
    assert read_logs(client, ns, "p", container="main", tail=0) == ""
    with pytest.raises(ValueError, match="tail must be"):
        read_logs(client, ns, "p", tail=-1)


def test_errors_are_flarekit_errors(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.add_pod(ns, "two", containers=["a", "b"], phase="Running")
    with pytest.raises(NotFound) as missing:
        read_logs(client, ns, "nope")
    assert missing.value.name == "nope" and missing.value.namespace == ns
    with pytest.raises(ApiError) as ambiguous:
        read_logs(client, ns, "two")
    assert ambiguous.value.code == 400
    assert "choose one of: [a b]" in ambiguous.value.message
    # As on kube-apiserver, a namespace that does not exist lists as empty, not 404.
    assert list(list_pods(client, "no-such-namespace", "a=b")) == []


def test_overload_is_retried_and_exhaustion_reported(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    fc.add_pod(ns, "p", phase="Running")
    fc.append_log(ns, "p", "ok")
    fc.inject(f"/api/v1/namespaces/{ns}/pods/p/log", status=503, times=2)
    assert read_logs(client, ns, "p") == "ok\n"
    fc.inject(f"/api/v1/namespaces/{ns}/pods", status=503, times=3)
    with pytest.raises(ApiUnavailable):
        list_pods(client, ns, "a=b")
    fc.clear_faults()


def test_follow_until_the_pod_finishes(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.add_pod(ns, "p", phase="Running")
    fc.append_log(ns, "p", "one\ntwo")
    lines = follow_logs(client, ns, "p", tail=1)
    assert next(lines) == "two"
    fc.append_log(ns, "p", "three")
    assert next(lines) == "three"
    fc.append_log(ns, "p", "four")
    fc.finish_pod(ns, "p")
    assert list(lines) == ["four"]


def test_follow_resumes_a_dropped_stream_without_repeats(
    fc: FakeCluster, client: Client, ns: str
) -> None:
    fc.add_pod(ns, "p", phase="Running")
    fc.append_log(ns, "p", "a\nb")
    lines = read_logs(client, ns, "p", follow=True)
    assert [next(lines), next(lines)] == ["a", "b"]
    wait_until(lambda: fc.open_log_streams == 1, "the stream is open")
    fc.drop_log_streams()
    fc.append_log(ns, "p", "c")
    assert next(lines) == "c"
    fc.drop_log_streams()  # the stream may be open again or not yet: either way no repeats
    fc.append_log(ns, "p", "d\ne")
    fc.finish_pod(ns, "p")
    assert list(lines) == ["d", "e"]
    assert fc.request_count("GET", f"/api/v1/namespaces/{ns}/pods/p/log") >= 2


def test_follow_waits_for_the_container_to_start(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.add_pod(ns, "p")
    lines = follow_logs(client, ns, "p", poll=0.01)
    fc.start_pod(ns, "p")
    fc.append_log(ns, "p", "hello")
    assert next(lines) == "hello"
    fc.finish_pod(ns, "p", "Failed")
    assert list(lines) == []


def test_follow_ends_when_the_pod_is_deleted(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.add_pod(ns, "p", phase="Running")
    fc.append_log(ns, "p", "x")
    lines = follow_logs(client, ns, "p", timestamps=True)
    assert next(lines).endswith("Z x")
    fc.delete("pods", "p", ns)
    assert list(lines) == []


def test_follow_of_a_finished_pending_pod_returns(fc: FakeCluster, client: Client, ns: str) -> None:
    fc.add_pod(ns, "p", phase="Failed")
    assert list(follow_logs(client, ns, "p", poll=0.01)) == []
    with pytest.raises(ValueError, match="poll must be"):
        follow_logs(client, ns, "p", poll=0)
