"""Broken and hostile kubeconfigs: one KubeconfigError naming the file and the entry, never a
TypeError from deep inside the official loader; an insecure cluster entry warns."""

# ruff: noqa: F811  (fixtures are imported from client_support and used as arguments)

from __future__ import annotations

import random
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml
from broken_files import broken
from client_support import cluster, fc, raycluster  # noqa: F401

from flarekit import Client, InsecureConnectionWarning, KubeconfigError, from_kubeconfig
from flarekit_models.ray.v1 import RayCluster
from flarekit_testing import FakeCluster

CLUSTERS = "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n"
CONTEXTS = "contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n"
USERS = "users:\n- name: u\n  user:\n    token: abc\n"
BOMB = "".join(
    f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9 if i else ['"x"'] * 9) + "]\n" for i in range(9)
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("apiVersion: v1\nclusters: [\n", "is not valid YAML or JSON"),
        ("- a\n- b\n", "must be a mapping, not a list"),
        ("hello\n", "must be a mapping, not a string"),
        ("current-context: [x]\n" + CONTEXTS, "current-context must be a string, not a list"),
        ("contexts: hello\n", "contexts must be a list, not a string"),
        ("contexts: [1, 2]\n", "contexts[0] must be a mapping, not a number (and 1 more)"),
        ("contexts:\n- context: {cluster: c}\n", "contexts[0].name must be a non-empty string"),
        ("contexts:\n- {name: x, context: 5}\n", "contexts[0].context must be a mapping"),
        ("clusters:\n- {name: c, cluster: {server: 5}}\n", "clusters[0].cluster.server must be"),
        ("users:\n- {name: u, user: {token: 5}}\n", "users[0].user.token must be a string"),
        ("users:\n- {name: u, user: {exec: 5}}\n", "users[0].user.exec must be a mapping"),
        (
            "users:\n- {name: u, user: {auth-provider: {name: oidc, config: 5}}}\n",
            "users[0].user.auth-provider.config must be a mapping of strings to strings",
        ),
        (
            "users:\n- {name: u, user: {exec: {command: x, env: [a]}}}\n",
            "users[0].user.exec.env must be a list of mappings with a name and a value",
        ),
        (BOMB + "current-context: x\n", "uses aliases that expand it"),
        ("current-context: x\n" + CONTEXTS + CLUSTERS + USERS + "a: &a [*a]\n", "refers to itself"),
    ],
)
def test_broken_kubeconfigs_are_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config"
    path.write_text(text)
    with pytest.raises(KubeconfigError) as error:
        from_kubeconfig(path)
    assert message in str(error.value)
    assert str(path) in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16"])
def test_kubeconfigs_in_other_encodings_are_refused(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "config"
    path.write_bytes(("current-context: x # café\n" + CONTEXTS + CLUSTERS + USERS).encode(encoding))
    with pytest.raises(KubeconfigError, match="is not UTF-8 text; save it as UTF-8"):
        from_kubeconfig(path)


def test_secrets_are_never_in_the_message(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text("users:\n- name: u\n  user: {token: s3cr3t, password: [s3cr3t]}\n")
    with pytest.raises(KubeconfigError) as error:
        from_kubeconfig(path)
    assert "password must be a string" in str(error.value)
    assert "s3cr3t" not in str(error.value)


def _insecure_copy(cluster: FakeCluster, path: Path) -> Path:
    doc: dict[str, Any] = yaml.safe_load(cluster.kubeconfig_path.read_text())
    entry = doc["clusters"][0]["cluster"]
    entry.pop("certificate-authority", None)
    entry.pop("certificate-authority-data", None)
    entry["insecure-skip-tls-verify"] = True
    path.write_text(yaml.safe_dump(doc))
    return path


def test_an_insecure_cluster_entry_warns_like_from_token(
    cluster: FakeCluster, tmp_path: Path
) -> None:
    path = _insecure_copy(cluster, tmp_path / "config")
    with pytest.warns(InsecureConnectionWarning, match="verification is disabled") as caught:
        creds = from_kubeconfig(path)
    assert "insecure-skip-tls-verify" in str(caught[0].message) and str(path) in str(
        caught[0].message
    )
    assert creds.configuration.verify_ssl is False
    with Client(creds) as client, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # urllib3 warns on each unverified request too
        client.create(raycluster("insecure-probe"))
        assert client.get(RayCluster, "insecure-probe").metadata is not None
        client.delete(RayCluster, "insecure-probe")


def test_a_verified_kubeconfig_does_not_warn(cluster: FakeCluster) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", InsecureConnectionWarning)
        assert from_kubeconfig(cluster.kubeconfig_path).configuration.verify_ssl is True


#: A kubeconfig of every kind of entry the loader reads (no exec plugin: loading would run it).
FULL = (
    b"apiVersion: v1\nkind: Config\ncurrent-context: x\npreferences: {}\n"
    b"clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n"
    b"    certificate-authority-data: Y2VydA==\n    tls-server-name: api.example\n"
    b"- name: d\n  cluster:\n    server: https://127.0.0.1:6444\n    insecure-skip-tls-verify: true\n"
    b"contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n    namespace: team-a\n"
    b"- name: y\n  context: {cluster: d, user: v}\n"
    b"users:\n- name: u\n  user:\n    token: abc\n"
    b"- name: v\n  user:\n    client-certificate-data: Y2VydA==\n    client-key-data: a2V5\n"
)
KUBECONFIG_VALUES = [
    b"server: 5", b"current-context: [x]", b"current-context: y", b"token: {a: 1}",
    b"contexts: 7", b"- name:", b"certificate-authority-data: '!!'", b"user: [1]",
    b"namespace: {}", b"client-key-data: 5", b"insecure-skip-tls-verify: maybe",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(3))
def test_no_broken_kubeconfig_escapes_as_another_error(tmp_path: Path, seed: int) -> None:
    """Mutated kubeconfigs: each gives credentials or one single-line KubeconfigError (exit
    code 4 in the CLI), never a TypeError or a YAML error from inside the loader."""
    path = tmp_path / "config"
    path.write_bytes(FULL)
    assert from_kubeconfig(path).namespace == "team-a"
    rng = random.Random(seed)
    refused = 0
    for _ in range(100):
        data = broken(FULL, rng, KUBECONFIG_VALUES)
        path.write_bytes(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InsecureConnectionWarning)
            try:
                from_kubeconfig(path)
            except KubeconfigError as exc:
                assert "\n" not in str(exc) and len(str(exc)) < 1000, data[:300]
                refused += 1
    assert refused > 0
