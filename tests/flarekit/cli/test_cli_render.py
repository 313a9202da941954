"""``flarekit cluster render``: manifests written with no cluster, kubeconfig or credentials."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cli_support import flarekit, one_error_line

from flarekit.cli import ExitCode

CONFIG = """\
name: demo
namespace: team-a
num_workers: 2
worker_memory_requests: 4Gi
worker_memory_limits: 4Gi
local_queue: team-a-queue
worker_groups:
  - name: gpus
    num_workers: 1
    extended_resource_requests: {nvidia.com/gpu: 1}
"""


def _offline(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """`flarekit argv...` in a child process that cannot find any kubeconfig."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE", "FLAREKIT"))}
    env |= {"HOME": str(home), "KUBECONFIG": str(tmp_path / "missing" / "config")}
    return subprocess.run(
        [sys.executable, "-m", "flarekit.cli", *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )


def test_render_writes_yaml_without_any_kubeconfig(tmp_path: Path) -> None:
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    done = _offline(tmp_path, "cluster", "render", "-f", "cfg.yaml", "--out-dir", "out/")
    assert done.returncode == 0, done.stderr
    written = tmp_path / "out" / "raycluster-demo.yaml"
    assert done.stderr.strip() == "wrote out/raycluster-demo.yaml"
    obj = yaml.safe_load(written.read_text())
    assert (obj["apiVersion"], obj["kind"]) == ("ray.io/v1", "RayCluster")
    assert obj["metadata"]["namespace"] == "team-a"
    assert obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a-queue"
    groups = {g["groupName"]: g for g in obj["spec"]["workerGroupSpecs"]}
    assert groups["workers"]["replicas"] == 2
    gpu = groups["gpus"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert gpu["nvidia.com/gpu"] == 1
    assert not (tmp_path / "home" / ".kube").exists()


def test_render_appwrapper_as_json_with_flags_over_the_file(tmp_path: Path) -> None:
    (tmp_path / "cfg.yaml").write_text(CONFIG)
    done = _offline(tmp_path, "cluster", "render", "-f", "cfg.yaml", "--appwrapper",
                    "--num-workers", "5", "-o", "json", "--out-dir", "manifests")  # fmt: skip
    assert done.returncode == 0, done.stderr
    obj = json.loads((tmp_path / "manifests" / "appwrapper-demo.json").read_text())
    assert obj["kind"] == "AppWrapper"
    assert obj["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a-queue"
    inner = obj["spec"]["components"][0]["template"]
    assert inner["kind"] == "RayCluster"
    assert inner["spec"]["workerGroupSpecs"][0]["replicas"] == 5


def test_render_to_stdout_and_from_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    result = flarekit(None, "cluster", "render", "solo", "--worker-gpus", "2")
    assert result.code == 0, result
    obj = yaml.safe_load(result.out)
    assert obj["metadata"]["name"] == "solo"
    assert "namespace" not in obj["metadata"]  # left to whoever applies it
    monkeypatch.setattr("sys.stdin", io.StringIO('{"name": "piped", "num_workers": 3}'))
    piped = flarekit(None, "cluster", "render", "-f", "-", "--output", "json")
    assert piped.code == 0, piped
    assert json.loads(piped.out)["spec"]["workerGroupSpecs"][0]["replicas"] == 3


def test_invalid_render_writes_nothing_and_says_one_line(tmp_path: Path) -> None:
    done = _offline(tmp_path, "cluster", "render", "bad", "--num-workers", "-3",
                    "--worker-memory", "8Gb", "--out-dir", "out")  # fmt: skip
    assert done.returncode == ExitCode.VALIDATION_ERROR
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "num_workers=-3" in lines[0] and "worker_memory_requests='8Gb'" in lines[0]
    assert not (tmp_path / "out").exists()


def test_unreadable_or_malformed_files_are_usage_errors(tmp_path: Path) -> None:
    missing = flarekit(None, "cluster", "render", "-f", str(tmp_path / "nope.yaml"))
    assert missing.code == ExitCode.USAGE_ERROR
    assert "cannot read config file" in one_error_line(missing)
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [unclosed\n")
    bad = flarekit(None, "cluster", "render", "-f", str(broken))
    assert bad.code == ExitCode.USAGE_ERROR
    assert "not valid YAML or JSON" in one_error_line(bad)
    listed = tmp_path / "list.yaml"
    listed.write_text("- a\n- b\n")
    wrong = flarekit(None, "cluster", "render", "-f", str(listed))
    assert wrong.code == ExitCode.USAGE_ERROR
    assert "must hold a mapping" in one_error_line(wrong)
    nameless = flarekit(None, "cluster", "render")
    assert nameless.code == ExitCode.USAGE_ERROR
    assert "needs a name" in one_error_line(nameless)


POD_TEMPLATES = """\
name: demo
head_pod_template:
  spec:
    serviceAccountName: ray
    securityContext: {runAsNonRoot: true}
worker_groups:
  - name: gpus
    pod_template:
      spec:
        schedulerName: custom
        containers: [{name: exporter, image: prom/node-exporter:v1.8.0}]
"""


def test_pod_templates_from_a_file_are_merged_and_conflicts_named(tmp_path: Path) -> None:
    config = tmp_path / "cfg.yaml"
    config.write_text(POD_TEMPLATES)
    result = flarekit(None, "cluster", "render", "-f", str(config))
    assert result.code == 0, result
    spec = yaml.safe_load(result.out)["spec"]
    head = spec["headGroupSpec"]["template"]["spec"]
    assert (head["serviceAccountName"], head["securityContext"]) == ("ray", {"runAsNonRoot": True})
    gpus = spec["workerGroupSpecs"][1]["template"]["spec"]
    assert gpus["schedulerName"] == "custom"
    assert [c["name"] for c in gpus["containers"]] == ["ray-worker", "exporter"]
    config.write_text(POD_TEMPLATES + "head_node_selector: {pool: cpu}\n"
                      + "worker_pod_template: {spec: {nodeSelector: {pool: a}}}\n"
                      + "worker_node_selector: {pool: b}\n")  # fmt: skip
    refused = flarekit(None, "cluster", "render", "-f", str(config))
    assert refused.code == ExitCode.VALIDATION_ERROR
    assert "worker_pod_template.spec.nodeSelector['pool']" in one_error_line(refused)
