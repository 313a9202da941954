"""ControlPlane: the real programs start, answer as a cluster does, and leave nothing behind.

The session's control plane (`control_plane`, tests/conftest.py) serves the checks of what it
is; the lifecycle checks start their own small ones (no CRDs, no nodes) so that stopping them
can be observed.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import uuid
from pathlib import Path

import kubernetes
import pytest

from flarekit import Client, Forbidden, from_kubeconfig, from_token
from flarekit.client._pods import read_logs
from flarekit_models.kueue.v1beta2 import LocalQueue
from flarekit_testing import ComponentFailed, ControlPlane, NotSupportedByRealServer, rule
from flarekit_testing.controlplane._kwok import SIMULATED_LOG
from kube_support import new_namespace
from wait_support import wait_until


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for every purpose but the process table.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return [pid for pid in found if _alive(pid)]


# -- lifecycle ------------------------------------------------------------------------------


def test_stop_leaves_no_process_and_no_directory(controlplane_binaries: Path) -> None:
    plane = ControlPlane(crds=[], nodes=(), binaries=controlplane_binaries)
    with plane:
        pids = dict(plane.started_pids)
        directory = plane.directory
        assert {"etcd", "kube-apiserver"} <= set(pids)
        assert all(_alive(pid) for pid in pids.values())
        assert directory.is_dir()
    assert not any(_alive(pid) for pid in pids.values()), pids
    assert not directory.exists()
    assert _processes_mentioning(str(directory)) == []


def test_failed_start_leaves_no_process_and_no_directory(
    tmp_path: Path, controlplane_binaries: Path
) -> None:
    """kube-apiserver exits at once: etcd, already running, is stopped and the directory
    removed, and the error carries the failing program's output."""
    real = controlplane_binaries
    broken = tmp_path / "bin"
    broken.mkdir()
    (broken / "etcd").symlink_to(real / "etcd")
    fake_apiserver = broken / "kube-apiserver"
    fake_apiserver.write_text(
        "#!/bin/sh\necho 'refusing to start: broken on purpose' >&2\nexit 3\n"
    )
    fake_apiserver.chmod(0o755)
    plane = ControlPlane(crds=[], nodes=(), binaries=broken, start_timeout=20)
    with pytest.raises(ComponentFailed, match="broken on purpose"):
        plane.start()
    assert plane.last_directory is not None
    assert not plane.last_directory.exists()
    assert "etcd" in plane.started_pids
    assert not any(_alive(pid) for pid in plane.started_pids.values())
    assert _processes_mentioning(str(plane.last_directory)) == []


def test_envtest_assets_run_without_controllers_and_nodes(
    tmp_path: Path, controlplane_binaries: Path
) -> None:
    """A KUBEBUILDER_ASSETS folder as envtest ships it (etcd and kube-apiserver): the API
    works, and pods are said to be unsupported rather than left pending silently."""
    real = controlplane_binaries
    assets = tmp_path / "assets"
    assets.mkdir()
    for name in ("etcd", "kube-apiserver"):
        shutil.copy(real / name, assets / name)
    with ControlPlane(crds=[], binaries=assets) as plane:
        assert plane.assets.missing == ["kube-controller-manager", "kube-scheduler", "kwok"]
        assert set(plane.started_pids) == {"etcd", "kube-apiserver"}
        assert plane.get("namespaces", "default") is not None
        plane.add_pod("default", "p")
        with pytest.raises(NotSupportedByRealServer, match="kwok"):
            plane.start_pod("default", "p")


def _widget_crd() -> dict[str, object]:
    """A small CRD of our own, so that the test pays for one cheap installation."""
    open_object = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    schema = {"type": "object", "properties": {"spec": open_object}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.flarekit.dev"},
        "spec": {
            "group": "example.flarekit.dev",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


def test_a_second_start_restores_the_installed_crds_from_the_cache(
    tmp_path: Path, controlplane_binaries: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first start installs the CRDs and saves etcd's keys; the next start with the same
    programs and CRDs restores them, and the restored CRD is served and stores objects."""
    monkeypatch.setenv("FLAREKIT_CACHE_DIR", str(tmp_path / "cache"))
    crds = [_widget_crd()]
    widget = {
        "apiVersion": "example.flarekit.dev/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"size": 3},
    }
    with ControlPlane(crds=crds, nodes=(), binaries=controlplane_binaries) as first:
        assert not first.restored_state
        first.create(widget)
    saved = list((tmp_path / "cache" / "controlplane-state").glob("*.json"))
    assert len(saved) == 1
    keys = {base64.b64decode(kv["key"]).decode() for kv in json.loads(saved[0].read_text())["kvs"]}
    crd_key = (
        "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.flarekit.dev"
    )
    assert crd_key in keys
    assert "/registry/namespaces/kube-system" in keys
    assert not [k for k in keys if k.startswith("/registry/leases/")]
    assert not [k for k in keys if k.endswith("/kube-root-ca.crt")]
    assert not [k for k in keys if "widgets/default/w" in k]  # saved before the test's object

    with ControlPlane(crds=crds, nodes=(), binaries=controlplane_binaries) as second:
        assert second.restored_state
        assert second.get("widgets", "w", "default") is None
        second.create(widget)
        stored = second.get("widgets", "w", "default")
        assert stored is not None and stored["spec"] == {"size": 3}

    changed = _widget_crd()
    changed["spec"]["names"]["shortNames"] = ["wd"]  # type: ignore[index]
    with ControlPlane(crds=[changed], nodes=(), binaries=controlplane_binaries) as third:
        assert not third.restored_state  # other CRDs, another copy
    with ControlPlane(
        crds=crds, nodes=(), binaries=controlplane_binaries, reuse_state=False
    ) as fourth:
        assert not fourth.restored_state
        assert fourth.get("customresourcedefinitions", "widgets.example.flarekit.dev")


# -- what the session's control plane is ---------------------------------------------------


@pytest.fixture
def namespace(control_plane: ControlPlane) -> str:
    return new_namespace(control_plane, "cp-")


def test_kube_apiserver_collects_garbage_less_often_unless_told(
    control_plane: ControlPlane,
) -> None:
    environ = Path(f"/proc/{control_plane.pids['kube-apiserver']}/environ").read_bytes()
    expected = os.environ.get("GOGC", "200")
    assert f"GOGC={expected}".encode() in environ.split(b"\0")


def test_crds_of_the_default_releases_are_established(control_plane: ControlPlane) -> None:
    crds = control_plane.objects("customresourcedefinitions")
    names = {c["metadata"]["name"] for c in crds}
    assert {
        "rayclusters.ray.io",
        "clusterqueues.kueue.x-k8s.io",
        "trainjobs.trainer.kubeflow.org",
    } <= names
    for crd in crds:
        conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
        assert conditions.get("Established") == "True", crd["metadata"]["name"]


def test_restricted_user_gets_forbidden_naming_verb_resource_and_namespace(
    control_plane: ControlPlane, namespace: str
) -> None:
    client = Client(
        from_token(control_plane.url, control_plane.restricted_token, ca_file=control_plane.ca_path)
    )
    with pytest.raises(Forbidden) as caught:
        client.get(LocalQueue, "anything", namespace=namespace)
    assert caught.value.code == 403
    text = str(caught.value)
    assert "get" in text and "localqueues.kueue.x-k8s.io" in text and namespace in text
    assert caught.value.operation.verb == "get"
    assert caught.value.operation.namespace == namespace
    # The server's own words name the user it refused.
    assert "flarekit-restricted" in caught.value.message


def test_added_user_may_do_what_its_rules_allow(
    control_plane: ControlPlane, namespace: str
) -> None:
    token = control_plane.add_user(
        f"reader-{namespace}",
        allow=[rule(["get", "list"], "localqueues", group="kueue.x-k8s.io", namespace=namespace)],
    )
    client = Client(from_token(control_plane.url, token, ca_file=control_plane.ca_path))
    assert list(client.list(LocalQueue, namespace=namespace)) == []
    with pytest.raises(Forbidden):
        list(client.list(LocalQueue, namespace="default"))


def test_client_certificates_authenticate(control_plane: ControlPlane) -> None:
    kubeconfig = control_plane.certificate_kubeconfig("cert-user", ("team-a",))
    api = kubernetes.config.new_client_from_config(config_file=str(kubeconfig))
    review = kubernetes.client.AuthenticationV1Api(api).create_self_subject_review(
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    )
    assert review.status.user_info.username == "cert-user"
    assert "team-a" in review.status.user_info.groups
    # Without rights, the certificate's user is refused like any other.
    with pytest.raises(Forbidden):
        list(Client(from_kubeconfig(kubeconfig)).list(LocalQueue, namespace="default"))


def test_deny_and_faults_are_refused_with_what_to_do(control_plane: ControlPlane) -> None:
    with pytest.raises(NotSupportedByRealServer, match="add_user"):
        control_plane.deny("get", "pods")
    with pytest.raises(NotSupportedByRealServer):
        control_plane.inject("/api/v1/pods")


# -- nodes, pods, controllers --------------------------------------------------------------


def test_fake_nodes_have_the_capacity_asked_for(control_plane: ControlPlane) -> None:
    nodes = control_plane.objects("nodes")
    assert len(nodes) == 2
    for node in nodes:
        assert node["status"]["allocatable"]["nvidia.com/gpu"] == "4"
        assert node["status"]["capacity"]["cpu"] == "16"
        ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready and ready[0]["status"] == "True"


def test_pod_is_scheduled_and_runs(control_plane: ControlPlane, namespace: str) -> None:
    control_plane.add_pod(namespace, "p", phase="Running")
    pod = control_plane.get("pods", "p", namespace)
    assert pod is not None
    assert pod["spec"]["nodeName"].startswith("node-")
    assert pod["status"]["phase"] == "Running"
    assert pod["status"]["podIP"].startswith("10.244.")
    ready = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
    assert ready["Ready"] == "True"


def test_a_pod_on_a_fake_node_logs_only_that_it_is_simulated(
    control_plane: ControlPlane, namespace: str
) -> None:
    """`pods/log` goes from the API server to the node's kubelet port, where KWOK answers as
    the kubelet would: with the note that the pod is simulated, and nothing invented."""
    for node in control_plane.objects("nodes"):
        assert node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] not in (0, 10250)
    control_plane.add_pod(namespace, "p", phase="Running")
    core = kubernetes.client.CoreV1Api(control_plane.api_client())
    assert core.read_namespaced_pod_log("p", namespace).splitlines() == list(SIMULATED_LOG)
    stamped = core.read_namespaced_pod_log("p", namespace, timestamps=True)
    assert stamped.split(" ", 1)[1].splitlines()[0] == SIMULATED_LOG[0]
    with Client(from_kubeconfig(control_plane.kubeconfig_path)) as client:
        assert read_logs(client, namespace, "p", tail=1) == SIMULATED_LOG[-1] + "\n"


def test_pod_asking_for_more_than_any_node_has_stays_pending(
    control_plane: ControlPlane, namespace: str
) -> None:
    big = {
        "name": "main",
        "image": "busybox",
        "resources": {"requests": {"nvidia.com/gpu": "9"}, "limits": {"nvidia.com/gpu": "9"}},
    }
    control_plane.add_pod(namespace, "big", containers=[big])

    def unschedulable() -> bool:
        pod = control_plane.get("pods", "big", namespace) or {}
        return any(
            c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"
            for c in (pod.get("status") or {}).get("conditions") or []
        )

    wait_until(unschedulable, "the pod is reported unschedulable", poll=0.1)


def _job(name: str, namespace: str, env: dict[str, str] | None = None) -> dict[str, object]:
    container: dict[str, object] = {"name": "main", "image": "busybox"}
    if env:
        container["env"] = [{"name": k, "value": v} for k, v in env.items()]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "backoffLimit": 0,
            "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
        },
    }


def _job_condition(plane: ControlPlane, name: str, namespace: str) -> set[str]:
    job = plane.get("jobs", name, namespace) or {}
    return {
        c["type"]
        for c in (job.get("status") or {}).get("conditions") or []
        if c["status"] == "True"
    }


def test_job_pods_complete_and_the_job_succeeds(
    control_plane: ControlPlane, namespace: str
) -> None:
    control_plane.create(_job("ok", namespace))
    wait_until(
        lambda: "Complete" in _job_condition(control_plane, "ok", namespace),
        "Job ok completes",
        poll=0.1,
    )


def test_job_pod_asked_to_fail_fails_the_job(control_plane: ControlPlane, namespace: str) -> None:
    control_plane.create(_job("bad", namespace, {"FLAREKIT_SIMULATED_EXIT_CODE": "3"}))
    wait_until(
        lambda: "Failed" in _job_condition(control_plane, "bad", namespace),
        "Job bad fails",
        poll=0.1,
    )
    pods = [
        p
        for p in control_plane.objects("pods", namespace)
        if p["metadata"].get("labels", {}).get("job-name") == "bad"
    ]
    assert pods
    state = pods[0]["status"]["containerStatuses"][0]["state"]["terminated"]
    assert state["exitCode"] == 3


def test_a_followed_log_on_a_fake_node_stays_open_after_the_pod_ended(
    control_plane: ControlPlane, namespace: str
) -> None:
    """A kubelet ends a followed log when the container stops; KWOK cannot tell that it did,
    so the stream stays open (docs/operators.md: read such logs without following)."""
    import urllib3

    control_plane.create(_job("followed", namespace))
    wait_until(
        lambda: "Complete" in _job_condition(control_plane, "followed", namespace),
        "Job followed completes",
        poll=0.1,
    )
    [pod] = [
        p["metadata"]["name"]
        for p in control_plane.objects("pods", namespace)
        if p["metadata"].get("labels", {}).get("job-name") == "followed"
    ]
    core = kubernetes.client.CoreV1Api(control_plane.api_client())
    response = core.read_namespaced_pod_log(
        pod, namespace, follow=True, _preload_content=False, _request_timeout=(10, 3)
    )
    try:
        chunks = response.stream(1024)
        assert next(chunks).decode().splitlines() == list(SIMULATED_LOG)
        with pytest.raises(urllib3.exceptions.ReadTimeoutError):
            next(chunks)  # still open, three seconds after the pod ended
    finally:
        response.close()


def test_garbage_collector_deletes_dependents(control_plane: ControlPlane, namespace: str) -> None:
    owner = control_plane.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "owner", "namespace": namespace},
        }
    )
    control_plane.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "dependent",
                "namespace": namespace,
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "name": "owner",
                        "uid": owner["metadata"]["uid"],
                    }
                ],
            },
        }
    )
    control_plane.delete("configmaps", "owner", namespace)
    wait_until(
        lambda: control_plane.get("configmaps", "dependent", namespace) is None,
        "the garbage collector deletes the dependent",
        poll=0.1,
    )


def test_namespace_deletion_completes(control_plane: ControlPlane) -> None:
    name = f"gone-{uuid.uuid4().hex[:6]}"
    control_plane.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    control_plane.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": name}}
    )
    control_plane.delete("namespaces", name)
    wait_until(
        lambda: control_plane.get("namespaces", name) is None, "the namespace is gone", poll=0.1
    )


def test_default_service_account_and_root_ca_appear(
    control_plane: ControlPlane, namespace: str
) -> None:
    wait_until(
        lambda: control_plane.get("serviceaccounts", "default", namespace),
        "the default service account",
        poll=0.1,
    )
    wait_until(
        lambda: control_plane.get("configmaps", "kube-root-ca.crt", namespace),
        "the root CA config map",
        poll=0.1,
    )


# -- the request log ---------------------------------------------------------------------


def test_request_log_counts_the_clients_requests_only(
    control_plane: ControlPlane, namespace: str
) -> None:
    client = Client(from_kubeconfig(control_plane.kubeconfig_path))
    control_plane.clear_requests()
    assert list(client.list(LocalQueue, namespace=namespace)) == []
    path = f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{namespace}/localqueues"
    assert control_plane.request_count(method="GET", path=path) == 1
    # The direct access and the control plane's own components are not clients.
    control_plane.get("namespaces", namespace)
    assert control_plane.request_count(path=f"/api/v1/namespaces/{namespace}") == 0
