"""Retries, timeouts, TLS and secret handling of RayJobClient's HTTP layer."""

from __future__ import annotations

import logging
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_dashboard import FakeDashboard, Reply, job

from flarekit.ray import (
    RayDashboardUnavailable,
    RayJobClient,
    RayJobsApiError,
    RayJobState,
)
from flarekit.ray._jobs_http import DashboardTransport
from flarekit_testing.apiserver._tls import TLSFiles, make_certificates

TOKEN = "tok-9f8e7d6c5b4a"
COOKIE = "session=c00kie-value"


def test_get_is_retried_on_503_until_it_succeeds(
    client: RayJobClient, dashboard: FakeDashboard
) -> None:
    dashboard.route(
        "GET", "/api/jobs/j", Reply(503, "busy"), Reply(503, "busy"), Reply(body=job("j"))
    )
    assert client.status("j") is RayJobState.RUNNING
    assert dashboard.count() == 3


def test_get_gives_up_after_its_retries(client: RayJobClient, dashboard: FakeDashboard) -> None:
    dashboard.route("GET", "/api/jobs/j", Reply(502, "bad gateway"))
    with pytest.raises(RayDashboardUnavailable, match=r"HTTP 502 \(bad gateway\) after 3 attempts"):
        client.get("j")
    assert dashboard.count() == 3


def test_posts_are_not_repeated_after_a_5xx(client: RayJobClient, dashboard: FakeDashboard) -> None:
    dashboard.route("POST", "/api/jobs/", Reply(503, "busy"), Reply(body={"submission_id": "s"}))
    with pytest.raises(RayDashboardUnavailable) as info:
        client.submit("echo")
    assert info.value.status == 503
    assert str(info.value).endswith("unavailable: HTTP 503 (busy)")
    assert dashboard.count() == 1


def test_500_is_an_api_error_and_not_retried(
    client: RayJobClient, dashboard: FakeDashboard
) -> None:
    dashboard.route("GET", "/api/jobs/", Reply(500, "boom"), Reply(body=[]))
    with pytest.raises(RayJobsApiError, match="HTTP 500: boom"):
        client.list_jobs()
    assert dashboard.count() == 1


def test_get_is_retried_after_a_dropped_connection(
    client: RayJobClient, dashboard: FakeDashboard
) -> None:
    dashboard.route("GET", "/api/jobs/j/logs", Reply(drop=True), Reply(body={"logs": "ok"}))
    assert client.logs("j") == "ok"
    assert dashboard.count() == 2


def test_a_dropped_post_is_reported_not_repeated(
    client: RayJobClient, dashboard: FakeDashboard
) -> None:
    dashboard.route("POST", "/api/jobs/j/stop", Reply(drop=True), Reply(body={"stopped": True}))
    with pytest.raises(RayDashboardUnavailable, match="RemoteDisconnected"):
        client.stop("j")
    assert dashboard.count() == 1


def test_a_slow_dashboard_times_out(dashboard: FakeDashboard) -> None:
    dashboard.route("GET", "/api/version", Reply(hang=True))
    client = RayJobClient(dashboard.url, timeout=0.2, retries=0)
    with pytest.raises(RayDashboardUnavailable, match=r"no answer within 0\.2s"):
        client.version()


def test_a_closed_port_is_unavailable_for_every_method() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens on `port` now: the connection is refused, so even a POST is retried.
    client = RayJobClient(f"http://127.0.0.1:{port}", retries=1, backoff=0)
    for call in (client.list_jobs, lambda: client.submit("echo")):
        with pytest.raises(RayDashboardUnavailable) as info:
            call()
        assert "ConnectionRefusedError" in str(info.value)
        assert info.value.address == f"http://127.0.0.1:{port}"
        assert isinstance(info.value, ConnectionError)


def test_bearer_token_and_headers_are_sent(dashboard: FakeDashboard) -> None:
    dashboard.route("GET", "/api/jobs/", Reply(body=[]))
    client = RayJobClient(dashboard.url, token=TOKEN, headers={"Cookie": COOKIE})
    assert client.list_jobs() == []
    sent = dashboard.requests[-1].headers
    assert sent["Authorization"] == f"Bearer {TOKEN}"
    assert sent["Cookie"] == COOKIE


def test_secrets_stay_out_of_repr_errors_and_logs(
    dashboard: FakeDashboard, caplog: pytest.LogCaptureFixture
) -> None:
    # A misbehaving proxy that echoes the request's credentials into its error page.
    echo = f"denied for Authorization: Bearer {TOKEN} with Cookie: {COOKIE}"
    dashboard.route("GET", "/api/jobs/j", Reply(401, echo))
    dashboard.route("GET", "/api/jobs/", Reply(302, "", headers={"Location": f"/login?t={TOKEN}"}))
    client = RayJobClient(dashboard.url, token=TOKEN, headers={"Cookie": COOKIE}, backoff=0)
    caplog.set_level(logging.DEBUG, logger="flarekit.ray")

    texts = [repr(client)]
    for call in (lambda: client.get("j"), client.list_jobs):
        with pytest.raises(RayJobsApiError) as info:
            call()
        texts += [str(info.value), info.value.message, info.value.body, repr(info.value)]
    texts += [record.getMessage() for record in caplog.records]

    assert repr(client) == f"RayJobClient('{dashboard.url}', token=<redacted>, headers=['Cookie'])"
    assert caplog.records, "requests should be logged at DEBUG"
    assert any("denied for Authorization: Bearer <redacted>" in text for text in texts)
    for text in texts:
        assert TOKEN not in text
        assert "c00kie-value" not in text


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> TLSFiles:
    return make_certificates(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def https_dashboard(tls_files: TLSFiles) -> Iterator[FakeDashboard]:
    with FakeDashboard(tls=tls_files.server_context()) as fake:
        fake.route("GET", "/api/version", Reply(body={"version": "4", "ray_version": "2.9.3"}))
        yield fake


def test_tls_with_the_cluster_ca(https_dashboard: FakeDashboard, tls_files: TLSFiles) -> None:
    for verify in (str(tls_files.ca_cert), Path(tls_files.ca_cert)):
        client = RayJobClient(https_dashboard.url, verify=verify)
        assert client.version().ray_version == "2.9.3"
    context = ssl.create_default_context(cafile=str(tls_files.ca_cert))
    assert RayJobClient(https_dashboard.url, verify=context).version().version == "4"


def test_tls_without_verification(https_dashboard: FakeDashboard) -> None:
    assert RayJobClient(https_dashboard.url, verify=False).version().version == "4"


def test_untrusted_certificate_is_unavailable_with_a_hint(https_dashboard: FakeDashboard) -> None:
    client = RayJobClient(https_dashboard.url, retries=3, backoff=0)
    with pytest.raises(RayDashboardUnavailable) as info:
        client.version()
    assert "TLS certificate not trusted" in str(info.value)
    assert "verify=" in str(info.value)


def test_retries_back_off_exponentially_up_to_a_cap(dashboard: FakeDashboard) -> None:
    dashboard.route("GET", "/api/jobs/", Reply(503, "busy"))
    delays: list[float] = []
    transport = DashboardTransport(dashboard.url, retries=5, backoff=1.5, sleep=delays.append)
    with pytest.raises(RayDashboardUnavailable, match="after 6 attempts"):
        transport.request("GET", "/api/jobs/")
    assert delays == [1.5, 3.0, 5.0, 5.0, 5.0]
    assert dashboard.count() == 6
