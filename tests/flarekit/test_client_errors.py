"""Every API failure becomes one flarekit exception with the Status and the request it answers;
idempotent requests are retried on 429/503 a bounded number of times, others never."""

# ruff: noqa: F811  (fixtures are imported from client_support and used as arguments)

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
import urllib3
from client_support import cluster, fc, raycluster  # noqa: F401
from kubernetes.client.exceptions import ApiException

from flarekit import (
    AlreadyExists,
    ApiError,
    ApiUnavailable,
    Client,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    RetryPolicy,
    ServerError,
    Unauthorized,
    from_kubeconfig,
    from_token,
)
from flarekit.client import _retry
from flarekit_models.ray.v1 import RayCluster
from flarekit_testing import FakeCluster
from kube_support import FAST_RETRY


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The backoff waits the client asked for (without waiting)."""
    recorded: list[float] = []
    monkeypatch.setattr(_retry, "_sleep", recorded.append)
    yield recorded


@pytest.fixture(autouse=True)
def _clean(cluster: FakeCluster) -> Iterator[None]:
    yield
    cluster.clear_faults()
    cluster.clear_denies()


def _collection(ns: str) -> str:
    return f"/apis/ray.io/v1/namespaces/{ns}/rayclusters"


def test_not_found_carries_status_and_request(client: Client, ns: str) -> None:
    with pytest.raises(NotFound) as info:
        client.get(RayCluster, "missing", namespace=ns)
    error = info.value
    assert (error.code, error.reason) == (404, "NotFound")
    assert error.message == 'rayclusters.ray.io "missing" not found'
    assert (error.verb, error.resource, error.name, error.namespace) == (
        "get",
        "rayclusters.ray.io",
        "missing",
        ns,
    )
    assert error.status["kind"] == "Status"
    assert f'get rayclusters.ray.io "missing" in namespace "{ns}"' in str(error)


def test_already_exists_and_conflict_are_distinct(client: Client, ns: str) -> None:
    created = client.create(raycluster("a"), namespace=ns)
    with pytest.raises(AlreadyExists) as exists:  # another object of that name
        client.create(raycluster("a", {"other": "yes"}), namespace=ns)
    assert not isinstance(exists.value, Conflict) and exists.value.verb == "create"
    client.patch(RayCluster, "a", {"metadata": {"labels": {"x": "1"}}}, namespace=ns)
    with pytest.raises(Conflict) as conflict:
        client.replace(created)
    assert conflict.value.reason == "Conflict" and conflict.value.code == 409


def test_invalid_lists_the_field_causes(client: Client, ns: str) -> None:
    client.create(raycluster("v"), namespace=ns)
    bad = {"spec": {"enableInTreeAutoscaling": "yes", "headGroupSpec": {"rayStartParams": 5}}}
    with pytest.raises(Invalid) as info:
        client.patch(RayCluster, "v", bad, namespace=ns)
    fields = sorted(c.field for c in info.value.causes)
    assert fields == ["spec.enableInTreeAutoscaling", "spec.headGroupSpec.rayStartParams"]
    assert all(c.reason == "FieldValueTypeInvalid" for c in info.value.causes)
    assert info.value.verb == "patch" and info.value.name == "v"


def test_forbidden(cluster: FakeCluster, client: Client, ns: str) -> None:
    cluster.deny("list", "rayclusters", ns)
    with pytest.raises(Forbidden) as info:
        list(client.list(RayCluster, namespace=ns))
    assert info.value.code == 403 and "cannot list" in info.value.message
    assert info.value.verb == "list"


def test_unauthorized(cluster: FakeCluster) -> None:
    creds = from_token(cluster.url, "not-a-valid-token", ca_file=cluster.ca_path)
    with Client(creds) as stranger, pytest.raises(Unauthorized) as info:
        stranger.get(RayCluster, "x")
    assert info.value.code == 401


def test_gone_from_a_stale_continue_token(cluster: FakeCluster, client: Client, ns: str) -> None:
    for name in ("a", "b", "c"):
        client.create(raycluster(name), namespace=ns)
    iterator = iter(client.list(RayCluster, namespace=ns, page_size=1))
    next(iterator)
    client.patch(RayCluster, "a", {"metadata": {"labels": {"x": "1"}}}, namespace=ns)
    cluster.compact()
    with pytest.raises(Gone):
        next(iterator)


def test_server_error_is_not_retried_and_carries_the_status(
    cluster: FakeCluster, client: Client, ns: str
) -> None:
    cluster.inject(_collection(ns), status=500, times=1)
    cluster.clear_requests()
    with pytest.raises(ServerError) as info:
        list(client.list(RayCluster, namespace=ns))
    assert (info.value.code, info.value.reason) == (500, "InternalError")
    assert cluster.request_count(path=_collection(ns)) == 1


def test_429_with_retry_after_is_retried_on_reads(
    cluster: FakeCluster, client: Client, ns: str, waits: list[float]
) -> None:
    client.create(raycluster("r"), namespace=ns)
    cluster.inject(f"{_collection(ns)}/r", status=429, times=2, retry_after=2)
    cluster.clear_requests()
    assert client.get(RayCluster, "r", namespace=ns).metadata is not None
    assert cluster.request_count(path=f"{_collection(ns)}/r") == 3
    assert waits == [2.0, 2.0]  # the server's Retry-After, not our own backoff


def test_503_is_retried_with_bounded_backoff(
    cluster: FakeCluster, client: Client, ns: str, waits: list[float]
) -> None:
    cluster.inject(_collection(ns), status=503, times=None, method="GET")
    cluster.clear_requests()
    with pytest.raises(ApiUnavailable) as info:
        list(client.list(RayCluster, namespace=ns))
    assert info.value.code == 503 and info.value.reason == "ServiceUnavailable"
    assert cluster.request_count(path=_collection(ns)) == FAST_RETRY.attempts
    assert len(waits) == FAST_RETRY.attempts - 1
    assert all(0 < w <= FAST_RETRY.max_backoff for w in waits)


def test_retry_after_is_capped(cluster: FakeCluster, ns: str, waits: list[float]) -> None:
    capped = Client(
        from_kubeconfig(cluster.kubeconfig_path), retry=RetryPolicy(max_retry_after=0.5)
    )
    cluster.inject(_collection(ns), status=429, times=1, retry_after=30)
    list(capped.list(RayCluster, namespace=ns))
    capped.close()
    assert waits == [0.5]


def test_create_is_never_retried(
    cluster: FakeCluster, client: Client, ns: str, waits: list[float]
) -> None:
    cluster.inject(_collection(ns), status=503, times=1, method="POST")
    cluster.clear_requests()
    with pytest.raises(ApiUnavailable):
        client.create(raycluster("once"), namespace=ns)
    assert cluster.request_count(method="POST", path=_collection(ns)) == 1
    assert waits == []
    assert cluster.get("rayclusters", "once", ns) is None


def test_json_patch_is_never_retried_but_merge_patch_is(
    cluster: FakeCluster, client: Client, ns: str, waits: list[float]
) -> None:
    client.create(raycluster("jp"), namespace=ns)
    path = f"{_collection(ns)}/jp"
    cluster.inject(path, status=503, times=1, method="PATCH")
    op = [{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}]
    with pytest.raises(ApiUnavailable):
        client.patch(RayCluster, "jp", op, namespace=ns, patch_type="json")
    cluster.inject(path, status=503, times=1, method="PATCH")
    client.patch(RayCluster, "jp", {"metadata": {"labels": {"a": "b"}}}, namespace=ns)
    assert len(waits) == 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_unreachable_server_is_api_unavailable(waits: list[float]) -> None:
    creds = from_token(f"https://127.0.0.1:{_closed_port()}", "t0ken", ca_data=_dummy_ca())
    with Client(creds, retry=FAST_RETRY) as nowhere, pytest.raises(ApiUnavailable) as info:
        nowhere.get(RayCluster, "x", namespace="default")
    error = info.value
    assert error.code is None and "cannot reach the API server" in error.message
    assert not isinstance(error, (ApiException, urllib3.exceptions.HTTPError))
    assert error.__cause__ is None and error.__suppress_context__
    # Nothing was sent (the connection was refused): the first retry goes at once.
    assert len(waits) == FAST_RETRY.attempts - 2


def test_an_untrusted_certificate_is_api_unavailable(cluster: FakeCluster) -> None:
    creds = from_token(cluster.url, cluster.token, ca_data=_dummy_ca())
    wrong_ca = Client(creds, retry=RetryPolicy(attempts=1))
    with wrong_ca, pytest.raises(ApiUnavailable, match="cannot reach"):
        wrong_ca.get(RayCluster, "x")


def test_every_error_is_an_api_error() -> None:
    for cls in (
        NotFound,
        AlreadyExists,
        Conflict,
        Invalid,
        Forbidden,
        Unauthorized,
        Gone,
        ServerError,
        ApiUnavailable,
    ):
        assert issubclass(cls, ApiError)


def _dummy_ca() -> str:
    """A self-signed CA that signed nothing the fake serves."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "unrelated-ca")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM).decode()
