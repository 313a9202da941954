"""Server-side apply as kube-apiserver does it, on FakeCluster and on the real control plane:
list-map keys the server defaults, ownership after a forced takeover, and which fields a
create or an update makes its manager own."""

from __future__ import annotations

from typing import Any

from agreement_support import send

APPLY = "application/apply-patch+yaml"
JSON = dict[str, Any]


def raycluster(ns: str) -> JSON:
    """As codeflare-sdk renders one: head ports without `protocol`, one worker group."""
    container = {
        "name": "ray-head",
        "image": "rayproject/ray:2.40.0",
        "ports": [
            {"containerPort": 6379, "name": "gcs"},
            {"containerPort": 8265, "name": "dashboard"},
        ],
    }
    worker = {"name": "ray-worker", "image": "rayproject/ray:2.40.0"}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": ns},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [container]}},
            },
            "workerGroupSpecs": [
                {
                    "groupName": "small",
                    "replicas": 1,
                    "minReplicas": 1,
                    "maxReplicas": 1,
                    "rayStartParams": {},
                    "template": {"spec": {"containers": [worker]}},
                }
            ],
        },
    }


def apply(server: Any, path: str, body: JSON, manager: str, force: bool = False) -> Any:
    query = f"?fieldManager={manager}" + ("&force=true" if force else "")
    return send(server, "PATCH", path + query, body, content_type=APPLY)


def causes(answer: Any) -> list[str]:
    return [c["field"] for c in answer.body["details"]["causes"]]


def test_applied_ports_without_protocol_are_the_stored_tcp_ports(
    api_server: Any, api_namespace: str
) -> None:
    """The server defaults a list-map key (`protocol: TCP`) in the applied configuration
    before it merges: re-applying, forcing and dry-running the same configuration change
    nothing instead of adding a second, duplicate port; a second manager's identical apply
    conflicts only on the worker groups, which the CRD's defaults made differ."""
    path = f"/apis/ray.io/v1/namespaces/{api_namespace}/rayclusters/rc"
    body = raycluster(api_namespace)
    assert apply(api_server, path, body, "first").status == 201
    again = apply(api_server, path, body, "first")
    assert again.status == 200, again.text
    ports = again.body["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"]
    assert [(p["containerPort"], p["protocol"]) for p in ports] == [(6379, "TCP"), (8265, "TCP")]
    dry = send(
        api_server, "PATCH", path + "?fieldManager=first&dryRun=All", body, content_type=APPLY
    )
    assert dry.status == 200, dry.text
    second = apply(api_server, path, body, "second")
    assert second.status == 409
    assert causes(second) == [".spec.workerGroupSpecs"]
    forced = apply(api_server, path, body, "second", force=True)
    assert forced.status == 200, forced.text
    back = apply(api_server, path, body, "first")
    assert back.status == 409 and causes(back) == [".spec.workerGroupSpecs"]


def test_two_managers_share_pod_ports_applied_without_protocol(
    api_server: Any, api_namespace: str
) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": api_namespace},
        "spec": {
            "containers": [
                {"name": "main", "image": "busybox:1.36", "ports": [{"containerPort": 8080}]}
            ]
        },
    }
    path = f"/api/v1/namespaces/{api_namespace}/pods/p"
    assert apply(api_server, path, pod, "first").status == 201
    shared = apply(api_server, path, pod, "second")
    assert shared.status == 200, shared.text
    owned = {m["manager"]: m["fieldsV1"] for m in shared.body["metadata"]["managedFields"]}
    ports = owned["second"]["f:spec"]["f:containers"]['k:{"name":"main"}']["f:ports"]
    assert set(ports) == {'k:{"containerPort":8080,"protocol":"TCP"}'}


def owned(answer: Any) -> dict[str, Any]:
    return {m["manager"]: m for m in answer.body["metadata"]["managedFields"]}


def test_forced_takeover_leaves_the_first_manager_the_rest(
    api_server: Any, api_namespace: str
) -> None:
    path = f"/apis/ray.io/v1/namespaces/{api_namespace}/rayclusters/rc"
    body = raycluster(api_namespace)
    apply(api_server, path, body, "first")
    forced = apply(api_server, path, body, "second", force=True)
    assert forced.status == 200, forced.text
    managers = owned(forced)
    assert [m["manager"] for m in forced.body["metadata"]["managedFields"]] == [
        "first",
        "second",
    ]
    assert set(managers["first"]["fieldsV1"]["f:spec"]) == {"f:headGroupSpec"}
    assert set(managers["second"]["fieldsV1"]["f:spec"]) == {
        "f:headGroupSpec",
        "f:workerGroupSpecs",
    }


def test_a_create_owns_the_maps_it_made_and_what_decoding_defaulted(
    api_server: Any, api_namespace: str
) -> None:
    """An update's manager owns each map and list it brought into being (`.`), what it sent
    and the Go type's defaults; not what the server sets afterwards (a service's cluster IP, a
    pod's service account, token volume, tolerations and priority)."""
    base = f"/api/v1/namespaces/{api_namespace}"
    cm = {"metadata": {"name": "c", "labels": {"a": "b"}}, "data": {"k": "v"}}
    made = send(api_server, "POST", f"{base}/configmaps?fieldManager=maker", cm)
    assert owned(made)["maker"]["fieldsV1"] == {
        "f:data": {".": {}, "f:k": {}},
        "f:metadata": {"f:labels": {".": {}, "f:a": {}}},
    }
    pod = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]},
    }
    made = send(api_server, "POST", f"{base}/pods?fieldManager=maker", pod)
    spec = owned(made)["maker"]["fieldsV1"]["f:spec"]
    assert "." not in spec and "." not in spec["f:containers"]
    assert {"f:enableServiceLinks", "f:restartPolicy", "f:dnsPolicy"} <= set(spec)
    assert not {"f:serviceAccountName", "f:volumes", "f:tolerations", "f:priority"} & set(spec)
    main = spec["f:containers"]['k:{"name":"main"}']
    assert {"f:imagePullPolicy", "f:resources"} <= set(main) and "f:volumeMounts" not in main
    service = {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}
    made = send(api_server, "POST", f"{base}/services?fieldManager=maker", service)
    spec = owned(made)["maker"]["fieldsV1"]["f:spec"]
    assert {"f:type", "f:sessionAffinity", "f:internalTrafficPolicy"} <= set(spec)
    assert not {"f:clusterIP", "f:clusterIPs", "f:ipFamilies", "f:ipFamilyPolicy"} & set(spec)
    assert "." in spec["f:ports"]


def test_ownership_of_a_map_whose_keys_another_manager_took(
    api_server: Any, api_namespace: str
) -> None:
    base = f"/api/v1/namespaces/{api_namespace}/configmaps"
    send(
        api_server,
        "POST",
        f"{base}?fieldManager=maker",
        {"metadata": {"name": "c"}, "data": {"k": "1"}},
    )
    patched = send(
        api_server,
        "PATCH",
        f"{base}/c?fieldManager=changer",
        {"data": {"k": "2"}},
        content_type="application/merge-patch+json",
    )
    managers = owned(patched)
    assert managers["maker"]["fieldsV1"] == {"f:data": {}}
    assert managers["changer"]["fieldsV1"] == {"f:data": {"f:k": {}}}


def test_an_apply_that_changes_nothing_gives_a_new_manager_no_time(
    api_server: Any, api_namespace: str
) -> None:
    path = f"/api/v1/namespaces/{api_namespace}/configmaps/c"
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}
    apply(api_server, path, cm, "first")
    shared = apply(api_server, path, cm, "second")
    entries = shared.body["metadata"]["managedFields"]
    assert [e["manager"] for e in entries] == ["second", "first"]
    assert "time" not in entries[0] and "time" in entries[1]
