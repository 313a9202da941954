"""Where credentials come from (kubeconfig places and contexts, token + CA, service account),
and login()/logout() restoring exactly the previous defaults."""

# ruff: noqa: F811  (fixtures are imported from client_support and used as arguments)

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import yaml
from client_support import cluster, fc, raycluster  # noqa: F401

from flarekit import (
    Client,
    InsecureConnectionWarning,
    KubeconfigError,
    current_credentials,
    from_kubeconfig,
    from_token,
    in_cluster,
    login,
    logout,
)
from flarekit.client._config import default_credentials
from flarekit_models.ray.v1 import RayCluster
from flarekit_testing import FakeCluster


@pytest.fixture(autouse=True)
def _no_leftover_logins() -> Iterator[None]:
    yield
    while current_credentials() is not None:
        logout()


def _works(client: Client) -> None:
    """A round trip that needs authentication and a trusted TLS connection."""
    name = f"probe-{id(client)}"
    client.create(raycluster(name))
    assert client.get(RayCluster, name).metadata is not None
    client.delete(RayCluster, name)


def _two_context_kubeconfig(cluster: FakeCluster, path: Path) -> Path:
    doc: dict[str, Any] = yaml.safe_load(cluster.kubeconfig_path.read_text())
    second = {"name": "team-b", "context": {**doc["contexts"][0]["context"], "namespace": "b"}}
    doc["contexts"].append(second)
    path.write_text(yaml.safe_dump(doc))
    return path


def test_explicit_kubeconfig_file(cluster: FakeCluster) -> None:
    creds = from_kubeconfig(cluster.kubeconfig_path)
    assert creds.server == cluster.url and creds.namespace == "default"
    with Client(creds) as client:
        _works(client)


def test_chosen_context_sets_the_namespace(cluster: FakeCluster, tmp_path: Path) -> None:
    path = _two_context_kubeconfig(cluster, tmp_path / "config")
    assert from_kubeconfig(path).namespace == "default"
    assert from_kubeconfig(path, context="team-b").namespace == "b"
    with pytest.raises(KubeconfigError, match="available contexts: flarekit-fake, team-b"):
        from_kubeconfig(path, context="nope")


def test_kubeconfig_env_may_list_several_files(
    cluster: FakeCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra = tmp_path / "extra"
    extra.write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "contexts": [
            {"name": "other", "context": {"cluster": "flarekit-fake", "user": "flarekit-fake",
                                          "namespace": "o"}}
        ]})
    )  # fmt: skip
    monkeypatch.setenv("KUBECONFIG", f"{cluster.kubeconfig_path}:{tmp_path / 'missing'}:{extra}")
    assert from_kubeconfig().namespace == "default"
    merged = from_kubeconfig(context="other")
    assert merged.namespace == "o" and merged.server == cluster.url
    with Client() as client:
        _works(client)


def test_home_kube_config_is_the_fallback(
    cluster: FakeCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".kube").mkdir()
    (tmp_path / ".kube" / "config").write_text(cluster.kubeconfig_path.read_text())
    assert default_credentials().server == cluster.url


def test_no_configuration_at_all_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(KubeconfigError, match=r"no cluster configured.*\.kube/config"):
        Client()
    with pytest.raises(KubeconfigError, match="no kubeconfig file found"):
        from_kubeconfig()


def test_token_with_ca_file_or_ca_data(cluster: FakeCluster) -> None:
    with Client(from_token(cluster.url, cluster.token, ca_file=cluster.ca_path)) as client:
        _works(client)
    pem = cluster.ca_path.read_text()
    with Client(from_token(cluster.url, cluster.token, ca_data=pem)) as client:
        _works(client)
    encoded = base64.b64encode(pem.encode()).decode()
    with Client(from_token(cluster.url, cluster.token, ca_data=encoded)) as client:
        _works(client)


def test_skipping_tls_verification_must_be_asked_for_and_warns(cluster: FakeCluster) -> None:
    with pytest.warns(InsecureConnectionWarning, match="verification is disabled"):
        creds = from_token(cluster.url, cluster.token, insecure_skip_tls_verify=True)
    assert creds.configuration.verify_ssl is False
    with Client(creds) as client, pytest.warns(Warning):  # urllib3 warns on each request too
        _works(client)
    assert from_token(cluster.url, cluster.token).configuration.verify_ssl is True


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"server": "http://127.0.0.1:1", "token": "t"}, "https://"),
        ({"server": "https://127.0.0.1:1", "token": ""}, "non-empty"),
        ({"server": "https://127.0.0.1:1", "token": "a b"}, "whitespace"),
        ({"server": "https://127.0.0.1:1", "token": "t", "ca_data": "nonsense"}, "PEM"),
        ({"server": "https://127.0.0.1:1", "token": "t", "ca_file": "/nonexistent"}, "ca_file"),
    ],
)
def test_bad_token_settings_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(KubeconfigError, match=message):
        from_token(**kwargs)


def test_in_cluster_service_account(cluster: FakeCluster, tmp_path: Path) -> None:
    (tmp_path / "token").write_text(cluster.token)
    (tmp_path / "ca.crt").write_text(cluster.ca_path.read_text())
    (tmp_path / "namespace").write_text("default\n")
    env = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(cluster.port)}
    creds = in_cluster(directory=tmp_path, environ=env)
    assert creds.server == cluster.url and creds.namespace == "default"
    with Client(creds) as client:
        _works(client)
    with pytest.raises(KubeconfigError, match="not running in a cluster"):
        in_cluster(directory=tmp_path, environ={})


def test_login_sets_the_defaults_and_logout_restores_them(cluster: FakeCluster) -> None:
    before = kubernetes.client.Configuration._default
    creds = from_token(cluster.url, cluster.token, ca_file=cluster.ca_path, namespace="default")
    assert login(creds) is creds
    assert current_credentials() is creds
    assert kubernetes.client.Configuration.get_default_copy().host == cluster.url
    with Client() as client:
        assert client.server == cluster.url
        _works(client)
    # The official client's default is now the login too.
    api = kubernetes.client.CustomObjectsApi()
    assert api.api_client.configuration.host == cluster.url
    logout()
    assert current_credentials() is None
    assert kubernetes.client.Configuration._default is before


def test_logins_nest(cluster: FakeCluster, tmp_path: Path) -> None:
    path = _two_context_kubeconfig(cluster, tmp_path / "config")
    outer = login(from_kubeconfig(path))
    inner = login(from_kubeconfig(path, context="team-b"))
    assert current_credentials() is inner
    logout()
    assert current_credentials() is outer
    assert Client().namespace == "default"
    logout()
    with pytest.raises(KubeconfigError, match="without a login"):
        logout()
