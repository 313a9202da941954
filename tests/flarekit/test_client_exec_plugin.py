"""Exec credential plugins of a kubeconfig run within bounds: a plugin that hangs is stopped
at its timeout with its whole process group, one that prints without end is stopped at the
output bound, and bad output is an `Unauthorized` naming the plugin, never a request sent
without credentials. A good plugin's token is used, cached, and asked for again after 401."""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from flarekit import Client, ReadLimits, RetryPolicy, Unauthorized, from_kubeconfig
from flarekit_models.core.v1 import Pod
from flarekit_testing import FakeCluster

API_VERSION = "client.authentication.k8s.io/v1"


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    with FakeCluster(crds=[]) as cluster:
        yield cluster


def _plugin(folder: Path, body: str, name: str = "plugin") -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _kubeconfig(fc: FakeCluster, folder: Path, plugin: Path, **exec_options: Any) -> Path:
    document = yaml.safe_load(fc.kubeconfig_path.read_text())
    document["users"][0]["user"] = {
        "exec": {"apiVersion": API_VERSION, "command": str(plugin), **exec_options}
    }
    path = folder / "kubeconfig"
    path.write_text(yaml.safe_dump(document))
    return path


def _credential(token: str, **status: Any) -> str:
    return json.dumps(
        {"apiVersion": API_VERSION, "kind": "ExecCredential", "status": {"token": token, **status}}
    )


def _client(path: Path, **limits: Any) -> Client:
    return Client(from_kubeconfig(path), limits=ReadLimits(**limits), retry=RetryPolicy(attempts=1))


def _alive(pid: int) -> bool:
    """Whether `pid` is a process that still runs (a zombie waiting to be reaped does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_a_plugins_token_is_used_and_cached(fc: FakeCluster, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    plugin = _plugin(tmp_path, f"echo run >> {runs}\necho '{_credential(fc.token)}'\n")
    credentials = from_kubeconfig(_kubeconfig(fc, tmp_path, plugin))
    assert not runs.exists()  # run when a request needs it, not when the file is read
    with Client(credentials) as client:
        list(client.list(Pod, namespace="default"))
        list(client.list(Pod, namespace="default"))
    assert runs.read_text().count("run") == 1


def test_an_expired_or_refused_token_is_asked_for_again(fc: FakeCluster, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    # The first run gives a token the server refuses (401): the client asks again.
    plugin = _plugin(
        tmp_path,
        f'echo run >> {runs}\nif [ "$(wc -l < {runs})" -eq 1 ]; then '
        f"echo '{_credential('wrong')}'; else echo '{_credential(fc.token)}'; fi\n",
    )
    with _client(_kubeconfig(fc, tmp_path, plugin)) as client:
        list(client.list(Pod, namespace="default"))
    assert runs.read_text().count("run") == 2
    expired = _credential(fc.token, expirationTimestamp="2000-01-01T00:00:00Z")
    again = _plugin(tmp_path, f"echo run >> {runs}\necho '{expired}'\n", "expiring")
    with _client(_kubeconfig(fc, tmp_path, again)) as client:
        list(client.list(Pod, namespace="default"))
        list(client.list(Pod, namespace="default"))
    assert runs.read_text().count("run") == 4  # expired at once: run before each request


def test_a_hanging_plugin_is_stopped_at_its_timeout_with_its_children(
    fc: FakeCluster, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    plugin = _plugin(tmp_path, f"sleep 300 &\necho $$ $! > {pids}\nsleep 300\n")
    client = _client(_kubeconfig(fc, tmp_path, plugin), exec_timeout=1.5)
    started = time.monotonic()
    with client, pytest.raises(Unauthorized) as info:
        list(client.list(Pod, namespace="default"))
    elapsed = time.monotonic() - started
    assert 1.5 <= elapsed < 5, elapsed
    assert info.value.reason == "ExecPluginFailed"
    assert f"exec credential plugin {str(plugin)!r} of user 'flarekit-fake'" in info.value.message
    assert "did not finish within 1.5s (ReadLimits.exec_timeout)" in info.value.message
    shell, child = (int(p) for p in pids.read_text().split())
    # The whole process group is gone (SIGKILL reaches the group's processes a moment later).
    deadline = time.monotonic() + 5
    while (_alive(shell) or _alive(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(shell) and not _alive(child)


def test_a_plugin_printing_without_end_is_stopped_at_the_bound(
    fc: FakeCluster, tmp_path: Path
) -> None:
    plugin = _plugin(tmp_path, "exec yes 'an endless credential'\n")
    client = _client(_kubeconfig(fc, tmp_path, plugin), max_exec_output_bytes=64 * 1024)
    with client, pytest.raises(Unauthorized, match=r"printed more than 64 KiB"):
        list(client.list(Pod, namespace="default"))


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("echo 'token: abc'\n", "printed something that is not JSON"),
        ("echo '[1, 2]'\n", "printed JSON that is not an ExecCredential object"),
        (
            'echo \'{"apiVersion": "client.authentication.k8s.io/v1beta1", '
            '"kind": "ExecCredential", "status": {"token": "x"}}\'\n',
            "answered in apiVersion 'client.authentication.k8s.io/v1beta1', not "
            "'client.authentication.k8s.io/v1'",
        ),
        (
            f"echo '{json.dumps({'apiVersion': API_VERSION, 'kind': 'ExecCredential'})}'\n",
            "printed an ExecCredential without a status",
        ),
        (
            f"echo '{json.dumps({'apiVersion': API_VERSION, 'kind': 'ExecCredential', 'status': {}})}'\n",
            "printed neither status.token nor both status.clientCertificateData",
        ),
        ("echo oops >&2\nexit 3\n", "failed with exit code 3"),
    ],
)
def test_bad_output_is_an_authentication_error_naming_the_plugin(
    fc: FakeCluster, tmp_path: Path, script: str, message: str
) -> None:
    plugin = _plugin(tmp_path, script)
    client = _client(_kubeconfig(fc, tmp_path, plugin))
    since = len(fc.requests)
    with client, pytest.raises(Unauthorized) as info:
        list(client.list(Pod, namespace="default"))
    assert str(plugin) in info.value.message and message in info.value.message
    assert len(fc.requests) == since  # nothing was sent without credentials


def test_a_missing_plugin_names_its_install_hint(fc: FakeCluster, tmp_path: Path) -> None:
    path = _kubeconfig(
        fc, tmp_path, tmp_path / "not-there", installHint="install it with: brew install x"
    )
    with _client(path) as client, pytest.raises(Unauthorized) as info:
        list(client.list(Pod, namespace="default"))
    assert "cannot be run" in info.value.message
    assert "install it with: brew install x" in info.value.message


def test_the_plugin_gets_its_environment_and_the_exec_info(fc: FakeCluster, tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    plugin = _plugin(
        tmp_path,
        f'echo "$PLUGIN_SETTING" > {seen}\necho "$KUBERNETES_EXEC_INFO" >> {seen}\n'
        f"echo '{_credential(fc.token)}'\n",
    )
    path = _kubeconfig(fc, tmp_path, plugin, env=[{"name": "PLUGIN_SETTING", "value": "on"}])
    with _client(path) as client:
        list(client.list(Pod, namespace="default"))
    setting, info = seen.read_text().splitlines()
    assert setting == "on"
    assert json.loads(info) == {
        "apiVersion": API_VERSION,
        "kind": "ExecCredential",
        "spec": {"interactive": False},
    }
    assert os.environ.get("PLUGIN_SETTING") is None
