"""Contract: what the server refuses for its size, and names in any script.

Measured on kube-apiserver with etcd's default limits, and FakeCluster answers alike: a
request body over 3 MiB is 413 `RequestEntityTooLarge`; an object etcd cannot store (1.5 MiB
with its key) is a 500 with the storage's message, over 2 MiB its gRPC client's; annotations
over 256 KiB in all are 422. flarekit's facade checks the same bounds before sending
(`flarekit._sizes`). An unknown field named in a script outside Latin-1 is pruned and answered
201 with a `Warning` header whose text is UTF-8.
"""

from __future__ import annotations

from typing import Any

import kubernetes
import pytest
from contract_backend import Cluster
from contract_support import GROUP, LQ, api, local_queue, status_of

from flarekit._sizes import MAX_ANNOTATION_BYTES

RAY = "ray.io"


def _raycluster(cluster: Cluster, name: str, value_bytes: int) -> dict[str, Any]:
    """A RayCluster whose one environment value is `value_bytes` long (stored as it is)."""
    container = {"name": "ray-head", "image": "rayproject/ray"}
    container["env"] = [{"name": "PAYLOAD", "value": "x" * value_bytes}]  # type: ignore[list-item]
    return {
        "apiVersion": f"{RAY}/{cluster.version(RAY)}",
        "kind": "RayCluster",
        "metadata": {"name": name},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [container]}},
            }
        },
    }


def _create(cluster: Cluster, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The status code and body of creating `body` (a RayCluster)."""
    try:
        created = api(cluster).create_namespaced_custom_object(
            RAY, cluster.version(RAY), cluster.namespace, "rayclusters", body
        )
    except kubernetes.client.ApiException as exc:
        return exc.status, status_of(exc)
    return 201, created


MiB = 1024 * 1024


@pytest.mark.parametrize(
    ("megabytes", "code", "says"),
    [
        (1.4, 201, ""),
        (1.6, 500, "etcdserver: request is too large"),
        (2.5, 500, "trying to send message larger than max"),
        (3.2, 413, "Request entity too large: limit is 3145728"),
    ],
)
def test_objects_too_large_to_store_are_refused(
    cluster: Cluster, megabytes: float, code: int, says: str
) -> None:
    answer, body = _create(cluster, _raycluster(cluster, "big", int(megabytes * MiB)))
    assert answer == code, body.get("message", "")[:300]
    if code == 201:
        return
    assert says in body["message"]
    if code == 413:
        assert body["reason"] == "RequestEntityTooLarge"
    else:
        assert "reason" not in body  # a storage failure: kube-apiserver names no reason
    with pytest.raises(kubernetes.client.ApiException) as caught:
        api(cluster).get_namespaced_custom_object(
            RAY, cluster.version(RAY), cluster.namespace, "rayclusters", "big"
        )
    assert caught.value.status == 404  # nothing was stored


def test_annotations_are_refused_beyond_256_kib_in_all(cluster: Cluster) -> None:
    at_limit = _raycluster(cluster, "at-limit", 10)
    at_limit["metadata"]["annotations"] = {"a": "x" * (MAX_ANNOTATION_BYTES - 1)}
    assert _create(cluster, at_limit)[0] == 201
    over = _raycluster(cluster, "over", 10)
    over["metadata"]["annotations"] = {"a": "x" * MAX_ANNOTATION_BYTES}
    code, body = _create(cluster, over)
    assert code == 422
    assert "metadata.annotations: Too long: may not be more than 262144 bytes" in body["message"]


def test_an_unknown_field_named_outside_latin_1_is_answered_201_with_a_utf8_warning(
    cluster: Cluster,
) -> None:
    body = local_queue(cluster, "lq")
    body["spec"]["字段"] = 1
    obj, code, headers = api(cluster).create_namespaced_custom_object_with_http_info(
        GROUP, cluster.version(GROUP), cluster.namespace, LQ, body
    )
    assert code == 201 and "字段" not in obj["spec"]
    # Python's HTTP client reads header bytes as Latin-1; the server wrote UTF-8.
    warning = headers.get("Warning", "").encode("latin-1").decode("utf-8")
    assert 'unknown field \\"spec.字段\\"' in warning
