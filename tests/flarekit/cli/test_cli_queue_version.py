"""``flarekit queue list|status``, ``flarekit version`` and ``flarekit --version``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from cli_support import flarekit, one_error_line

from flarekit.cli import ExitCode, main
from flarekit_testing import FakeCluster


def test_queue_list_and_status(fake: FakeCluster, namespace: str) -> None:
    listed = flarekit(fake, "queue", "list", namespace=namespace)
    assert listed.code == 0, listed
    assert "lq (default)" in listed.out and "cq" in listed.out
    data = yaml.safe_load(flarekit(fake, "queue", "list", "-o", "yaml", namespace=namespace).out)
    assert data["kind"] == "List"  # the LocalQueues as stored
    assert data["items"] == [fake.get("localqueues", "lq", namespace)]
    everywhere = json.loads(flarekit(fake, "queue", "list", "-A", "-o", "json").out)
    assert {q["metadata"]["namespace"] for q in everywhere["items"]} >= {namespace}
    status = flarekit(fake, "queue", "status", "lq", namespace=namespace)
    assert "cpu" in status.out and "1000" in status.out
    as_json = flarekit(fake, "queue", "status", "lq", "-o", "json", namespace=namespace)
    assert json.loads(as_json.out)["spec"]["clusterQueue"] == "cq"
    named = flarekit(fake, "queue", "status", "lq", "-o", "name", namespace=namespace)
    assert named.out == "localqueue.kueue.x-k8s.io/lq\n"
    missing = flarekit(fake, "queue", "status", "nope", namespace=namespace)
    assert missing.code == ExitCode.API_ERROR
    assert "nope" in one_error_line(missing)


def test_version_shows_client_models_and_server(fake: FakeCluster) -> None:
    result = flarekit(fake, "version", "-o", "json")
    assert result.code == 0, result
    data = json.loads(result.out)
    assert data["client"]["flarekit"] == "0.1.0"
    assert data["client"]["models_generator"]
    assert data["server"]["url"].startswith("https://127.0.0.1:")
    assert data["server"].get("releases") or data["server"].get("api_groups")
    table = flarekit(fake, "version")
    assert table.out.startswith("flarekit ") and "KubeRay" in table.out
    releases = flarekit(fake, "version", "--releases")
    assert releases.code == 0, releases
    assert "release v" in releases.out  # which KubeRay, Kueue... release the server runs


def test_plain_version_is_one_discovery_request_and_imports_no_compat(fake: FakeCluster) -> None:
    """``flarekit version`` answers from discovery: two short reads (/version, /apis), no
    CRD reads and no import of the version shims (which pull in the kubernetes client: the
    seconds ``version`` used to take)."""
    before = len(fake.requests)
    script = (
        "import sys; from flarekit.cli import main; "
        f"code = main(['version', '--kubeconfig', {str(fake.kubeconfig_path)!r}]); "
        "print('compat imported:', 'flarekit.compat' in sys.modules); sys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("compat imported: False"), done.stdout
    paths = sorted(r.path for r in fake.requests[before:])
    assert paths == ["/apis", "/version"], paths


def test_version_without_negotiation_lists_served_groups(
    fake: FakeCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("flarekit.cli._version.NEGOTIATE_MODULE", "flarekit.no_such_module")
    data = json.loads(flarekit(fake, "version", "-o", "json").out)
    groups = {g["group"]: g["versions"] for g in data["server"]["api_groups"]}
    assert groups["ray.io"][0] == "v1"
    assert groups["kueue.x-k8s.io"][0] in ("v1beta2", "v1beta1")
    assert groups["route.openshift.io"] == []  # known to flarekit, not served here
    text = flarekit(fake, "version", "--all-groups").out
    assert "not served" in text and "jobset.x-k8s.io" in text


def test_version_client_needs_no_cluster() -> None:
    result = flarekit(None, "version", "--client", "--kubeconfig", "/nonexistent/config")
    assert result.code == 0, result
    assert "flarekit          0.1.0" in result.out and "server" not in result.out


def test_version_option_names_the_models_generator_and_pinned_releases(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import flarekit_models

    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("flarekit          0.1.0\n")
    assert f"models generator  {flarekit_models.GENERATOR_VERSION}\n" in out
    assert f"models lock       {flarekit_models.SOURCE_LOCK}\n" in out
    for family, tags in flarekit_models.PINNED_RELEASES.items():
        assert f"  {family:18} {', '.join(tags)}\n" in out
    assert "kuberay" in flarekit_models.PINNED_RELEASES


def test_version_json_lists_the_pinned_releases_of_the_models() -> None:
    import flarekit_models

    data = json.loads(flarekit(None, "version", "--client", "-o", "json").out)
    releases = {f: tuple(t) for f, t in data["client"]["models_releases"].items()}
    assert releases == flarekit_models.PINNED_RELEASES
    assert data["client"]["models_lock"].startswith("crds.lock.tsv sha256:")
