"""Injected failures and delays, and the request log."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import kubernetes
import pytest
from fakecluster_support import GROUP, Raw, status_of, widget

from flarekit_testing import FakeCluster

ApiException = kubernetes.client.ApiException


@pytest.fixture(autouse=True)
def _clean(cluster: FakeCluster) -> Iterator[None]:
    cluster.clear_requests()
    yield
    cluster.clear_faults()


def test_inject_fails_n_times_then_recovers(api: Any, cluster: FakeCluster, ns: str) -> None:
    rule = cluster.inject(f"/apis/{GROUP}/v1/namespaces/{ns}/widgets", status=500, times=2)
    for _ in range(2):
        with pytest.raises(ApiException) as err:
            api.list_namespaced_custom_object(GROUP, "v1", ns, "widgets")
        assert err.value.status == 500
        assert status_of(err.value)["reason"] == "InternalError"
    assert api.list_namespaced_custom_object(GROUP, "v1", ns, "widgets")["items"] == []
    assert rule.hits == 2
    assert [r.status for r in cluster.requests] == [500, 500, 200]


def test_retry_after(raw: Raw, api: Any, cluster: FakeCluster, ns: str) -> None:
    path = f"/apis/{GROUP}/v1/namespaces/{ns}/widgets"
    cluster.inject(path, status=429, times=1, retry_after=3)
    response = raw("GET", path)
    assert response.status == 429
    assert response.headers["Retry-After"] == "3"
    assert response.json()["reason"] == "TooManyRequests"
    assert response.json()["details"] == {"retryAfterSeconds": 3}
    # The official client (urllib3) honours Retry-After on 429 by itself and tries again.
    cluster.inject(path, status=429, times=1, retry_after=0)
    assert api.list_namespaced_custom_object(GROUP, "v1", ns, "widgets")["items"] == []
    assert [r.status for r in cluster.requests] == [429, 429, 200]


def test_inject_by_method_and_predicate(api: Any, cluster: FakeCluster, ns: str) -> None:
    cluster.inject(f"/apis/{GROUP}", status=503, times=None, method="POST")
    cluster.inject(lambda r: r.param("labelSelector") == "boom", status=500, times=None)
    with pytest.raises(ApiException) as err:
        api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    assert (err.value.status, status_of(err.value)["reason"]) == (503, "ServiceUnavailable")
    with pytest.raises(ApiException) as err:
        api.list_namespaced_custom_object(GROUP, "v1", ns, "widgets", label_selector="boom")
    assert status_of(err.value)["reason"] == "InternalError"
    api.list_namespaced_custom_object(GROUP, "v1", ns, "widgets")
    assert cluster.objects("widgets", ns) == []


def test_fault_rule_arguments_are_checked(cluster: FakeCluster) -> None:
    with pytest.raises(ValueError, match="status must be one of 429, 500, 502, 503, 504"):
        cluster.inject("/", status=404)
    with pytest.raises(ValueError, match="times must be a positive number"):
        cluster.inject("/", times=0)


def test_delay_holds_requests(api: Any, cluster: FakeCluster, ns: str) -> None:
    rule = cluster.delay(f"/apis/{GROUP}/v1/namespaces/{ns}", 0.05, times=1)
    api.list_namespaced_custom_object(GROUP, "v1", ns, "widgets")
    api.list_namespaced_custom_object(GROUP, "v1", ns, "widgets")
    assert rule.hits == 1


def test_request_log_and_counts(api: Any, cluster: FakeCluster, ns: str) -> None:
    assert cluster.request_count() == 0  # "no request was sent"
    api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", widget("a"))
    api.list_namespaced_custom_object(GROUP, "v1", ns, "widgets", label_selector="x=y")
    with pytest.raises(ApiException):
        api.get_namespaced_custom_object(GROUP, "v1", ns, "widgets", "nope")
    first = cluster.requests[0]
    assert (first.method, first.path, first.status) == (
        "POST",
        f"/apis/{GROUP}/v1/namespaces/{ns}/widgets",
        201,
    )
    assert cluster.requests[1].query == {"labelSelector": ["x=y"]}
    assert cluster.request_count(method="GET") == 2
    assert cluster.request_count(status=404) == 1
    assert cluster.request_count(path=f"/apis/{GROUP}/v1/namespaces/{ns}/widgets/") == 1
    assert cluster.request_count(where=lambda r: r.user == "flarekit-admin") == 3
