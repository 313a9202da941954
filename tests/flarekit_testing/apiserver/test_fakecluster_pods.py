"""Pods on FakeCluster through the official CoreV1Api: the pod strategy, selectors, watch,
status, deletion, discovery, and the log subresource with its options and errors."""

from __future__ import annotations

import json
from typing import Any

import kubernetes
import pytest

from flarekit_testing import FakeCluster
from wait_support import wait_until

ApiException = kubernetes.client.ApiException


@pytest.fixture
def core(client: Any) -> Any:
    return kubernetes.client.CoreV1Api(client)


def pod_body(name: str, *containers: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": c, "image": "busybox:1.36"} for c in containers]},
    }


def error(exc: pytest.ExceptionInfo[ApiException]) -> tuple[int, str]:
    body = json.loads(exc.value.body)
    return int(exc.value.status), str(body["message"])


def test_created_pod_is_pending_with_defaults(core: Any, ns: str) -> None:
    body = pod_body("p", "main")
    body["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
    body["status"] = {"phase": "Running"}  # ignored: status is the kubelet's
    pod = core.create_namespaced_pod(ns, body)
    assert pod.status.phase == "Pending"
    assert pod.status.qos_class == "Burstable"
    assert pod.spec.restart_policy == "Always"
    assert pod.spec.containers[0].image_pull_policy == "IfNotPresent"
    assert pod.metadata.uid and pod.metadata.generation == 1  # the pod strategy sets it


def test_invalid_pods_are_refused_naming_the_field(core: Any, ns: str) -> None:
    cases = {
        "spec.containers: Required value": pod_body("a"),
        'spec.containers[1].name: Duplicate value: "x"': pod_body("b", "x", "x"),
    }
    no_image = pod_body("c", "main")
    del no_image["spec"]["containers"][0]["image"]
    cases["spec.containers[0].image: Required value"] = no_image
    for expected, body in cases.items():
        with pytest.raises(ApiException) as exc:
            core.create_namespaced_pod(ns, body)
        code, message = error(exc)
        assert code == 422 and expected in message, message


def test_spec_is_immutable_except_images(core: Any, ns: str) -> None:
    core.create_namespaced_pod(ns, pod_body("p", "main"))
    patched = core.patch_namespaced_pod(
        "p", ns, {"spec": {"containers": [{"name": "main", "image": "busybox:1.37"}]}}
    )
    assert patched.spec.containers[0].image == "busybox:1.37"
    with pytest.raises(ApiException) as exc:
        core.patch_namespaced_pod("p", ns, {"spec": {"restartPolicy": "Never"}})
    code, message = error(exc)
    assert code == 422 and "pod updates may not change fields" in message


def test_list_by_selector_watch_status_and_delete(cluster: FakeCluster, core: Any, ns: str) -> None:
    cluster.add_pod(ns, "a", labels={"app": "x", "tier": "1"})
    cluster.add_pod(ns, "b", labels={"app": "x", "tier": "2"})
    cluster.add_pod(ns, "c", labels={"app": "y"})
    names = [p.metadata.name for p in core.list_namespaced_pod(ns, label_selector="app=x").items]
    assert names == ["a", "b"]
    picked = core.list_namespaced_pod(ns, label_selector="app=x,tier notin (1)").items
    assert [p.metadata.name for p in picked] == ["b"]
    everywhere = core.list_pod_for_all_namespaces(label_selector="app=y").items
    assert [(p.metadata.namespace, p.metadata.name) for p in everywhere] == [(ns, "c")]

    rv = core.list_namespaced_pod(ns).metadata.resource_version
    cluster.start_pod(ns, "a")
    cluster.finish_pod(ns, "a", "Failed")
    core.delete_namespaced_pod("a", ns)
    watch = kubernetes.watch.Watch()
    events = []
    for event in watch.stream(
        core.list_namespaced_pod, ns, label_selector="app=x", resource_version=rv,
        timeout_seconds=2,
    ):  # fmt: skip
        events.append((event["type"], event["object"].status.phase))
        if event["type"] == "DELETED":
            watch.stop()
    assert events == [("MODIFIED", "Running"), ("MODIFIED", "Failed"), ("DELETED", "Failed")]
    failed = cluster.objects("pods", ns)
    assert [p["metadata"]["name"] for p in failed] == ["b", "c"]


def test_status_subresource_and_discovery(cluster: FakeCluster, core: Any, ns: str) -> None:
    cluster.add_pod(ns, "p")
    core.patch_namespaced_pod_status("p", ns, {"status": {"phase": "Running"}})
    assert core.read_namespaced_pod("p", ns).status.phase == "Running"
    resources = {r.name: r.verbs for r in core.get_api_resources().resources}
    assert resources["pods/log"] == ["get"]
    assert "watch" in resources["pods"] and "pods/status" in resources


# -- logs -------------------------------------------------------------------------------------


def test_logs_as_plain_text_with_tail_timestamps_and_limit(
    cluster: FakeCluster, core: Any, ns: str
) -> None:
    cluster.add_pod(ns, "p", phase="Running")
    cluster.append_log(ns, "p", "one\ntwo\n")
    cluster.append_log(ns, "p", "three")
    assert core.read_namespaced_pod_log("p", ns) == "one\ntwo\nthree\n"
    assert core.read_namespaced_pod_log("p", ns, tail_lines=2) == "two\nthree\n"
    assert core.read_namespaced_pod_log("p", ns, tail_lines=0) == ""
    assert core.read_namespaced_pod_log("p", ns, limit_bytes=6) == "one\ntw"
    stamped = core.read_namespaced_pod_log("p", ns, timestamps=True).splitlines()
    stamp, _, text = stamped[0].partition(" ")
    assert text == "one" and stamp.endswith("Z") and len(stamp.split(".")[1]) == 10
    response = core.read_namespaced_pod_log("p", ns, _preload_content=False)
    assert response.headers["Content-Type"] == "text/plain"


def test_log_option_errors_use_the_apiservers_words(
    cluster: FakeCluster, core: Any, ns: str
) -> None:
    cluster.add_pod(ns, "multi", containers=["a", "b"], spec={"initContainers": [
        {"name": "setup", "image": "busybox"}]}, phase="Running")  # fmt: skip
    cluster.add_pod(ns, "pending")
    cases = [
        (dict(name="multi"), 400, "a container name must be specified for pod multi, choose "
         "one of: [a b] or one of the init containers: [setup]"),
        (dict(name="multi", container="c"), 400, "container c is not valid for pod multi"),
        (dict(name="multi", container="a", previous=True), 400,
         'previous terminated container "a" in pod "multi" not found'),
        (dict(name="pending"), 400,
         'container "main" in pod "pending" is waiting to start: ContainerCreating'),
        (dict(name="multi", container="a", tail_lines=-1), 422,
         'PodLogOptions "multi" is invalid: tailLines: Invalid value: -1: must be greater '
         "than or equal to 0"),
        (dict(name="gone"), 404, 'pods "gone" not found'),
    ]  # fmt: skip
    for kwargs, code, message in cases:
        name = kwargs.pop("name")
        with pytest.raises(ApiException) as exc:
            core.read_namespaced_pod_log(name, ns, **kwargs)
        assert error(exc) == (code, message)
    assert core.read_namespaced_pod_log("multi", ns, container="setup") == ""


def test_since_time_counts_whole_seconds(cluster: FakeCluster, core: Any, ns: str) -> None:
    cluster.add_pod(ns, "p", phase="Running")
    cluster.append_log(ns, "p", "old\nnew\n")
    stamps = [line.split(" ")[0] for line in cluster_lines(core, ns)]
    since = stamps[1].split(".")[0] + "Z"  # the apiserver passes whole seconds on
    path = f"/api/v1/namespaces/{ns}/pods/p/log"
    response = core.api_client.call_api(
        path, "GET", query_params=[("sinceTime", since)], auth_settings=["BearerToken"],
        _preload_content=False, _return_http_data_only=True,
    )  # fmt: skip
    assert response.data.decode().endswith("new\n")
    later = core.api_client.call_api(
        path, "GET", query_params=[("sinceTime", "2999-01-01T00:00:00Z")],
        auth_settings=["BearerToken"], _preload_content=False, _return_http_data_only=True,
    )  # fmt: skip
    assert later.data == b""


def cluster_lines(core: Any, ns: str) -> list[str]:
    return list(core.read_namespaced_pod_log("p", ns, timestamps=True).splitlines())


def test_follow_streams_until_the_pod_finishes(cluster: FakeCluster, core: Any, ns: str) -> None:
    cluster.add_pod(ns, "p", phase="Running")
    cluster.append_log(ns, "p", "first")
    response = core.read_namespaced_pod_log("p", ns, follow=True, _preload_content=False)
    chunks = response.stream(1024)
    assert next(chunks) == b"first\n"
    cluster.append_log(ns, "p", "second")
    assert next(chunks) == b"second\n"
    cluster.append_log(ns, "p", "last")
    cluster.finish_pod(ns, "p")
    assert b"".join(chunks) == b"last\n"


def test_dropped_follow_breaks_the_connection(cluster: FakeCluster, core: Any, ns: str) -> None:
    cluster.add_pod(ns, "p", phase="Running")
    cluster.append_log(ns, "p", "first")
    response = core.read_namespaced_pod_log("p", ns, follow=True, _preload_content=False)
    chunks = response.stream(1024)
    assert next(chunks) == b"first\n"
    wait_until(lambda: cluster.open_log_streams == 1, "the stream is open")
    assert cluster.drop_log_streams() == 1
    with pytest.raises(Exception) as exc:
        list(chunks)
    assert "ProtocolError" in type(exc.value).__name__ or "ended" in str(exc.value)


def test_deleted_pod_takes_its_logs(cluster: FakeCluster, core: Any, ns: str) -> None:
    cluster.add_pod(ns, "p", phase="Running")
    cluster.append_log(ns, "p", "mine")
    core.delete_namespaced_pod("p", ns)
    cluster.add_pod(ns, "p", phase="Running")
    assert core.read_namespaced_pod_log("p", ns) == ""


def test_test_helpers_name_what_is_there(cluster: FakeCluster, ns: str) -> None:
    cluster.add_pod(ns, "two", containers=["a", "b"])
    with pytest.raises(ValueError, match="choose one of a, b"):
        cluster.append_log(ns, "two", "x")
    with pytest.raises(ValueError, match="pods there: two"):
        cluster.append_log(ns, "nope", "x")
    with pytest.raises(ValueError, match="phase must be one of"):
        cluster.add_pod(ns, "bad", phase="Done")
    assert cluster.append_log(ns, "two", "x\ny", container="b") == 2
    assert cluster.read_log(ns, "two", "b") == "x\ny\n"
