"""kubectl's conventions: ``-o`` is ``--output`` everywhere, ``-o yaml|json|name|wide`` print
the API objects, and ``list`` takes ``-A``, ``-l`` and ``-w``."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
import yaml
from cli_support import Result, flarekit, one_error_line

from flarekit.cli import ExitCode
from flarekit_testing import FakeCluster
from kube_support import kueue_api


def test_render_dash_o_is_the_output_format_not_a_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    as_yaml = flarekit(None, "cluster", "render", "demo", "-o", "yaml")
    assert as_yaml.code == 0, as_yaml
    assert yaml.safe_load(as_yaml.out)["kind"] == "RayCluster"
    as_json = flarekit(None, "cluster", "render", "demo", "-o", "json")
    assert json.loads(as_json.out)["metadata"]["name"] == "demo"
    assert list(tmp_path.iterdir()) == []  # no directory called yaml (or json)


def test_render_to_a_directory_is_out_dir_and_a_path_after_dash_o_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    wrong = flarekit(None, "cluster", "render", "demo", "-o", "out/")
    assert wrong.code == ExitCode.USAGE_ERROR
    assert "use --out-dir" in one_error_line(wrong)
    assert list(tmp_path.iterdir()) == []
    right = flarekit(None, "cluster", "render", "demo", "--out-dir", "out")
    assert right.code == 0, right
    assert (tmp_path / "out" / "raycluster-demo.yaml").is_file()


def _status_json_while_unchanged(fake: FakeCluster, namespace: str) -> tuple[object, object]:
    """`cluster status -o json` and the stored object, from a call during which the stored
    object did not change (the simulated operator updates its status in the background, so a
    call it raced is repeated)."""
    for _ in range(20):
        before = fake.get("rayclusters", "obj", namespace)
        as_json = flarekit(fake, "cluster", "status", "obj", "-o", "json", namespace=namespace)
        assert as_json.code == 0, as_json
        after = fake.get("rayclusters", "obj", namespace)
        assert before is not None and after is not None
        if before["metadata"]["resourceVersion"] == after["metadata"]["resourceVersion"]:
            return json.loads(as_json.out), after
        time.sleep(0.05)
    raise AssertionError("the RayCluster changed during every one of 20 status calls")


def test_status_prints_the_stored_objects(fake: FakeCluster, namespace: str) -> None:
    applied = flarekit(fake, "cluster", "apply", "obj", "-o", "yaml", namespace=namespace)
    assert applied.code == 0, applied
    stored = fake.get("rayclusters", "obj", namespace)
    assert stored is not None
    assert yaml.safe_load(applied.out)["metadata"]["uid"] == stored["metadata"]["uid"]
    printed, stored_then = _status_json_while_unchanged(fake, namespace)
    assert printed == stored_then
    named = flarekit(fake, "cluster", "status", "obj", "-o", "name", namespace=namespace)
    assert named.out == "raycluster.ray.io/obj\n"
    both = flarekit(fake, "cluster", "status", "obj", "--details", "-o", "json",
                    namespace=namespace)  # fmt: skip
    assert both.code == ExitCode.USAGE_ERROR
    down = flarekit(fake, "cluster", "down", "obj", "-o", "name", namespace=namespace)
    assert (down.code, down.out) == (0, "raycluster.ray.io/obj\n")


def test_list_all_namespaces_selector_and_wide(fake: FakeCluster, namespace: str) -> None:
    other = f"{namespace}-b"
    fake.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}})
    fake.create(
        {
            "apiVersion": kueue_api(fake),
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": other},
            "spec": {"clusterQueue": "cq"},
        }
    )
    for ns, name, team in ((namespace, "alpha", "a"), (other, "beta", "b")):
        done = flarekit(fake, "cluster", "apply", name, "--local-queue", "lq", "--label",
                        f"team={team}", namespace=ns)  # fmt: skip
        assert done.code == 0, done
    everywhere = flarekit(fake, "cluster", "list", "-A")
    assert everywhere.code == 0, everywhere
    lines = everywhere.out.splitlines()
    assert lines[0].startswith("Ray clusters in all namespaces: ")
    assert lines[1].split()[:2] == ["NAMESPACE", "NAME"]
    found = {tuple(line.split()[:2]) for line in lines[3:]}
    assert {(namespace, "alpha"), (other, "beta")} <= found

    selected = flarekit(fake, "cluster", "list", "-A", "-l", "team=b", "-o", "name")
    assert selected.out == "raycluster.ray.io/beta\n"
    wide = flarekit(fake, "cluster", "list", "-o", "wide", namespace=namespace)
    assert wide.out.splitlines()[1].split()[-2:] == ["KIND", "HEAD"]
    assert "RayCluster" in wide.out.splitlines()[3]
    for ns, name in ((namespace, "alpha"), (other, "beta")):
        assert flarekit(fake, "cluster", "down", name, namespace=ns).code == 0


def test_job_list_all_namespaces_and_selector(fake: FakeCluster, namespace: str) -> None:
    submitted = flarekit(fake, "job", "submit", "labelled", "--kind", "trainjob", "--label",
                         "team=x", "--set", "suspend=true", namespace=namespace)  # fmt: skip
    assert submitted.code == 0, submitted
    everywhere = flarekit(fake, "job", "list", "-A", "-l", "team=x")
    assert everywhere.out.splitlines()[1].split()[:2] == ["NAMESPACE", "NAME"]
    assert everywhere.out.splitlines()[3].split()[:3] == [namespace, "labelled", "TrainJob"]
    none = flarekit(fake, "job", "list", "-l", "team=y", "-o", "json", namespace=namespace)
    assert json.loads(none.out) == {"apiVersion": "v1", "kind": "List", "items": []}
    assert flarekit(fake, "job", "delete", "labelled", namespace=namespace).code == 0


def test_watch_prints_rows_as_they_change(fake: FakeCluster, namespace: str) -> None:
    watched: list[Result] = []
    thread = threading.Thread(
        target=lambda: watched.append(
            # Long enough for a first apply on a busy machine (it learns the releases the
            # cluster serves: seconds) and the cluster's way to READY after it.
            flarekit(fake, "cluster", "list", "-w", "--timeout", "20", namespace=namespace)
        )
    )
    thread.start()
    time.sleep(1.0)
    assert flarekit(fake, "cluster", "apply", "seen", namespace=namespace).code == 0
    thread.join(timeout=30)
    assert not thread.is_alive()
    (result,) = watched
    assert result.code == 0, result
    lines = result.out.splitlines()
    assert lines[0] == f"Ray clusters in namespace {namespace}: 0"
    states = [line.split()[1] for line in lines[1:] if line.split()[0] == "seen"]
    assert states and states[-1] == "READY", result.out  # each change, ending ready
    assert flarekit(fake, "cluster", "down", "seen", namespace=namespace).code == 0


def test_a_negative_timeout_is_a_usage_error_before_any_request(
    fake: FakeCluster, namespace: str
) -> None:
    fake.clear_requests()
    result = flarekit(fake, "cluster", "apply", "neg", "--wait", "--timeout", "-5",
                      namespace=namespace)  # fmt: skip
    assert result.code == ExitCode.USAGE_ERROR
    assert "a timeout is 0 seconds or more" in one_error_line(result)
    assert fake.requests == []


def test_an_unknown_output_format_names_the_formats(fake: FakeCluster) -> None:
    result = flarekit(fake, "job", "list", "-o", "xml")
    assert result.code == ExitCode.USAGE_ERROR
    assert "table, wide, name, yaml, json" in one_error_line(result)


@pytest.mark.parametrize("group", ["cluster", "job", "queue", "dev"])
def test_help_is_plain_text(group: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert flarekit(None, group, "--help").code == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"usage: flarekit {group}")
    for markup in ("``", ":class:", ":func:", ":mod:"):
        assert markup not in shown, shown


@pytest.mark.parametrize(
    ("noun", "says"),
    [
        ("job", "Jobs in namespace ghost-ns: 0"),
        ("queue", "No LocalQueues in namespace 'ghost-ns'."),
        ("cluster", "Ray clusters in namespace ghost-ns: 0"),
    ],
)
def test_listing_a_namespace_that_does_not_exist_is_empty(
    fake: FakeCluster, noun: str, says: str
) -> None:
    # As `kubectl get -n ghost-ns`: nothing found is not an error, for every noun alike.
    listed = flarekit(fake, noun, "list", namespace="ghost-ns")
    assert (listed.code, listed.out.strip()) == (0, says), listed
