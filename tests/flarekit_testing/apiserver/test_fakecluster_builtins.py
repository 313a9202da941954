"""Built-in kinds on FakeCluster, as kube-apiserver v1.36 answers them (messages checked there):
ConfigMaps, Secrets, ServiceAccounts, Services, Events (core and events.k8s.io), Ingresses,
what every namespace and every new pod gets, typed decoding (protobuf, missing kind)."""

from __future__ import annotations

import json
from typing import Any

import kubernetes
import pytest
from fakecluster_support import Raw

from flarekit_testing import FakeCluster
from flarekit_testing.apiserver._protobuf import MAGIC, MEDIA_TYPE

ApiException = kubernetes.client.ApiException


@pytest.fixture
def core(client: Any) -> Any:
    return kubernetes.client.CoreV1Api(client)


def failure(exc: pytest.ExceptionInfo[ApiException]) -> tuple[int, str]:
    body = json.loads(exc.value.body)
    return int(exc.value.status), str(body["message"])


def test_every_namespace_gets_a_service_account_and_the_root_ca(core: Any, ns: str) -> None:
    assert core.read_namespaced_service_account("default", ns).metadata.name == "default"
    root = core.read_namespaced_config_map("kube-root-ca.crt", ns)
    assert root.data["ca.crt"].startswith("-----BEGIN CERTIFICATE-----")


def test_configmap_keys_and_immutability(core: Any, ns: str) -> None:
    with pytest.raises(ApiException) as bad:
        core.create_namespaced_config_map(ns, {"metadata": {"name": "c"}, "data": {"a b": "1"}})
    code, message = failure(bad)
    assert code == 422 and message.startswith('ConfigMap "c" is invalid: data[a b]: Invalid value')
    core.create_namespaced_config_map(
        ns, {"metadata": {"name": "frozen"}, "data": {"a": "1"}, "immutable": True}
    )
    with pytest.raises(ApiException) as changed:
        core.patch_namespaced_config_map("frozen", ns, {"data": {"a": "2"}})
    assert failure(changed) == (
        422,
        'ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set',
    )


def test_secret_data_is_base64_and_string_data_is_folded_in(raw: Raw, core: Any, ns: str) -> None:
    bad = raw(
        "POST",
        f"/api/v1/namespaces/{ns}/secrets",
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "b"}, "data": {"k": "no!"}},
    )
    assert bad.status == 400
    assert json.loads(bad.data)["message"] == (
        'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 2'
    )
    made = core.create_namespaced_secret(
        ns, {"metadata": {"name": "s"}, "stringData": {"user": "ray"}}
    )
    assert made.data == {"user": "cmF5"} and made.type == "Opaque"
    assert made.string_data is None


def test_service_defaults_and_validation(core: Any, ns: str) -> None:
    svc = core.create_namespaced_service(
        ns, {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}
    )
    assert svc.spec.type == "ClusterIP" and svc.spec.session_affinity == "None"
    assert svc.spec.cluster_ip.startswith("10.") and svc.spec.cluster_i_ps == [svc.spec.cluster_ip]
    assert (svc.spec.ports[0].protocol, svc.spec.ports[0].target_port) == ("TCP", 80)
    with pytest.raises(ApiException) as missing:
        core.create_namespaced_service(ns, {"metadata": {"name": "none"}, "spec": {}})
    assert failure(missing) == (422, 'Service "none" is invalid: spec.ports: Required value')


def test_a_new_pod_gets_what_admission_adds(core: Any, ns: str) -> None:
    pod = core.create_namespaced_pod(
        ns,
        {
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]},
        },
    )
    assert pod.spec.service_account_name == "default"
    [volume] = pod.spec.volumes
    assert volume.name.startswith("kube-api-access-")
    mount = pod.spec.containers[0].volume_mounts[0]
    assert mount.mount_path == "/var/run/secrets/kubernetes.io/serviceaccount"
    assert {t.key for t in pod.spec.tolerations} == {
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    }
    assert pod.spec.priority == 0 and pod.spec.enable_service_links is True


def test_events_are_one_storage_seen_through_two_apis(raw: Raw, core: Any, ns: str) -> None:
    core.create_namespaced_event(
        ns,
        {
            "metadata": {"name": "e1"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": ns},
            "reason": "Started",
            "message": "hello",
            "type": "Normal",
        },
    )
    found = core.list_namespaced_event(ns, field_selector="involvedObject.name=p").items
    assert [(e.reason, e.message) for e in found] == [("Started", "hello")]
    assert core.list_namespaced_event(ns, field_selector="involvedObject.name=q").items == []
    # read raw: as from kube-apiserver, an Event made through core/v1 has `eventTime: null`,
    # which the official client's EventsV1Event refuses
    events = json.loads(raw("GET", f"/apis/events.k8s.io/v1/namespaces/{ns}/events").data)
    [event] = events["items"]
    assert (event["reason"], event["note"], event["regarding"]["name"]) == ("Started", "hello", "p")
    assert event["eventTime"] is None and event["deprecatedSource"] == {}


def test_event_namespace_must_match_its_object(core: Any, ns: str) -> None:
    with pytest.raises(ApiException) as err:
        core.create_namespaced_event(
            ns,
            {
                "metadata": {"name": "e"},
                "involvedObject": {"kind": "Pod", "name": "p", "namespace": "elsewhere"},
            },
        )
    assert failure(err)[0] == 422
    assert "involvedObject.namespace" in failure(err)[1]


def test_ingress_needs_path_types(client: Any, ns: str) -> None:
    api = kubernetes.client.NetworkingV1Api(client)
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    rule = {"host": "a.example.com", "http": {"paths": [{"path": "/", "backend": backend}]}}
    with pytest.raises(ApiException) as err:
        api.create_namespaced_ingress(ns, {"metadata": {"name": "i"}, "spec": {"rules": [rule]}})
    assert "pathType: Required value: pathType must be specified" in failure(err)[1]
    rule["http"]["paths"][0]["pathType"] = "Prefix"
    made = api.create_namespaced_ingress(ns, {"metadata": {"name": "i"}, "spec": {"rules": [rule]}})
    assert made.metadata.generation == 1


def test_typed_create_without_kind_takes_it_from_the_url(core: Any, ns: str) -> None:
    made = core.create_namespaced_config_map(
        ns, kubernetes.client.V1ConfigMap(metadata=kubernetes.client.V1ObjectMeta(name="typed"))
    )
    assert made.kind == "ConfigMap" and made.api_version == "v1"


def _varint(n: int) -> bytes:
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        out += bytes([byte | (0x80 if n else 0)])
        if not n:
            return out


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def test_protobuf_bodies_of_built_in_kinds_are_read(raw: Raw, ns: str) -> None:
    meta = _field(1, b"from-proto") + _field(11, _field(1, b"app") + _field(2, b"x"))
    configmap = _field(1, meta) + _field(2, _field(1, b"k") + _field(2, b"v"))
    type_meta = _field(1, b"v1") + _field(2, b"ConfigMap")
    body = MAGIC + _field(1, type_meta) + _field(2, configmap)
    made = raw("POST", f"/api/v1/namespaces/{ns}/configmaps", body, content_type=MEDIA_TYPE)
    assert made.status == 201, made.data
    obj = json.loads(made.data)
    assert obj["metadata"]["labels"] == {"app": "x"} and obj["data"] == {"k": "v"}


def test_protobuf_for_a_custom_resource_is_refused(raw: Raw, ns: str) -> None:
    made = raw(
        "POST",
        f"/apis/example.com/v1/namespaces/{ns}/widgets",
        MAGIC + b"\x0a\x00",
        content_type=MEDIA_TYPE,
    )
    assert made.status == 415


def test_new_pods_are_scheduled_to_a_simulated_node(
    cluster: FakeCluster, core: Any, ns: str
) -> None:
    cluster.add_pod(ns, "runner")
    pod = cluster.get("pods", "runner", ns)
    assert pod is not None and pod["spec"]["nodeName"] in ("node-0", "node-1")
    assert pod["status"]["phase"] == "Pending"  # scheduled, not running
    assert pod["status"]["conditions"][0]["type"] == "PodScheduled"
    [event] = core.list_namespaced_event(ns, field_selector="involvedObject.name=runner").items
    assert (event.reason, event.reporting_component) == ("Scheduled", "default-scheduler")
    assert event.message == f"Successfully assigned {ns}/runner to {pod['spec']['nodeName']}"
