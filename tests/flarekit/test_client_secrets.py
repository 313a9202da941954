"""Tokens never show: not in any log line (DEBUG on our, kubernetes' and urllib3's loggers),
not in a repr, not in an exception's text."""

# ruff: noqa: F811  (fixtures are imported from client_support and used as arguments)

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from client_support import cluster, fc, raycluster  # noqa: F401

from flarekit import (
    ApiError,
    Client,
    KubeconfigError,
    RetryPolicy,
    current_credentials,
    from_kubeconfig,
    from_token,
    in_cluster,
    login,
    logout,
)
from flarekit_models.ray.v1 import RayCluster
from flarekit_testing import FakeCluster

LOGGERS = ("", "flarekit", "kubernetes", "kubernetes.client.rest", "urllib3", "client")


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    yield caplog


def _exercise(client: Client, texts: list[str]) -> None:
    """Successful calls, failures and a watch; collect every repr and exception text."""
    texts += [repr(client), str(client)]
    client.create(raycluster("secret-probe"))
    client.patch(RayCluster, "secret-probe", {"metadata": {"labels": {"a": "b"}}})
    list(client.list(RayCluster, page_size=1))
    with client.watch(RayCluster, timeout=1) as watch:
        texts.append(repr(next(watch)))
    calls: list[Callable[[], object]] = [
        lambda: client.get(RayCluster, "missing"),
        lambda: client.create(raycluster("secret-probe")),
    ]
    for call in calls:
        try:
            call()
        except ApiError as exc:
            texts += [str(exc), repr(exc), repr(exc.status), repr(exc.__context__)]
    client.delete(RayCluster, "secret-probe")


def _assert_hidden(secret: str, texts: list[str], caplog: pytest.LogCaptureFixture) -> None:
    assert len(secret) >= 16
    for record in caplog.records:
        assert secret not in record.getMessage(), record.getMessage()
    assert secret not in caplog.text
    for text in texts:
        assert secret not in text


def test_kubeconfig_token_never_appears(
    cluster: FakeCluster, debug_logs: pytest.LogCaptureFixture
) -> None:
    texts: list[str] = []
    creds = from_kubeconfig(cluster.kubeconfig_path)
    texts.append(repr(creds))
    with Client(creds) as client:
        _exercise(client, texts)
    loggers = {r.name.split(".")[0] for r in debug_logs.records}
    assert {"flarekit", "urllib3"} <= loggers  # DEBUG output was produced and captured
    _assert_hidden(cluster.token, texts, debug_logs)


def test_explicit_token_never_appears_even_when_rejected(
    cluster: FakeCluster, debug_logs: pytest.LogCaptureFixture
) -> None:
    texts: list[str] = []
    good = cluster.add_user("secret-user")
    creds = from_token(cluster.url, good, ca_file=cluster.ca_path)
    login(creds)
    try:
        texts += [repr(creds), repr(current_credentials())]
        with Client() as client:
            _exercise(client, texts)
    finally:
        logout()
    wrong = "wrong-" + good[::-1]
    with Client(from_token(cluster.url, wrong, ca_file=cluster.ca_path)) as stranger:
        try:
            stranger.get(RayCluster, "x")
        except ApiError as exc:
            texts += [str(exc), repr(exc)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        insecure = from_token(cluster.url, good, insecure_skip_tls_verify=True)
        texts.append(repr(insecure))
        with Client(insecure, retry=RetryPolicy(attempts=1)) as client:
            texts.append(repr(client))
            try:
                client.get(RayCluster, "x", namespace="default")
            except ApiError as exc:
                texts.append(str(exc))
    _assert_hidden(good, texts, debug_logs)
    _assert_hidden(wrong, texts, debug_logs)


def test_configuration_errors_do_not_echo_the_token(
    cluster: FakeCluster, tmp_path: Path, debug_logs: pytest.LogCaptureFixture
) -> None:
    secret = "s3cr3t-token-value-0123456789"
    texts: list[str] = []
    attempts: list[Callable[[], object]] = [
        lambda: from_token("http://127.0.0.1:1", secret),
        lambda: from_token(cluster.url, secret + " tail"),
        lambda: from_token(cluster.url, secret, ca_data="not a certificate"),
    ]
    for bad in attempts:
        with pytest.raises(KubeconfigError) as info:
            bad()
        texts += [str(info.value), repr(info.value)]
    (tmp_path / "token").write_text(secret)
    with pytest.raises(KubeconfigError) as missing_ca:
        in_cluster(directory=tmp_path, environ={"KUBERNETES_SERVICE_HOST": "127.0.0.1",
                                                "KUBERNETES_SERVICE_PORT": "1"})  # fmt: skip
    texts.append(str(missing_ca.value))
    _assert_hidden(secret, texts, debug_logs)
