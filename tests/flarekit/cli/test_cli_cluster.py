"""``flarekit cluster apply|status|list|down`` against FakeCluster with simulated operators."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import flarekit, one_error_line

from flarekit.cli import ExitCode
from flarekit_testing import FakeCluster


def test_apply_wait_status_list_down(fake: FakeCluster, namespace: str, tmp_path: Path) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text("name: demo\nnum_workers: 1\nworker_memory_requests: 2Gi\n")
    applied = flarekit(fake, "cluster", "apply", "-f", str(config), "--num-workers", "2",
                       "--worker-memory", "3Gi", "--wait", "--timeout", "30",
                       namespace=namespace)  # fmt: skip
    assert applied.code == 0, applied
    assert "READY" in applied.out and "2/2" in applied.out
    stored = fake.get("rayclusters", "demo", namespace)
    assert stored is not None
    worker = stored["spec"]["workerGroupSpecs"][0]
    assert worker["replicas"] == 2  # the flag wins over the file
    resources = worker["template"]["spec"]["containers"][0]["resources"]
    assert resources["requests"]["memory"] == resources["limits"]["memory"] == "3Gi"
    assert stored["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "lq"  # the default

    status = flarekit(fake, "cluster", "status", "demo", namespace=namespace)
    assert status.code == 0, status
    assert "READY" in status.out and "lq" in status.out and "2/2" in status.out

    details = flarekit(fake, "cluster", "status", "demo", "--details", namespace=namespace)
    assert details.code == 0, details
    assert f"ray://demo-head-svc.{namespace}.svc:10001" in details.out

    listed = flarekit(fake, "cluster", "list", namespace=namespace)
    assert listed.code == 0 and "demo" in listed.out and "READY" in listed.out

    down = flarekit(fake, "cluster", "down", "demo", "--wait", namespace=namespace)
    assert down.code == 0, down
    assert f"Ray cluster {namespace}/demo deleted" in down.out
    assert fake.get("rayclusters", "demo", namespace) is None


def test_appwrapper_cluster_is_listed_once(fake: FakeCluster, namespace: str) -> None:
    applied = flarekit(fake, "cluster", "apply", "wrapped", "--appwrapper", namespace=namespace)
    assert applied.code == 0, applied
    assert fake.get("appwrappers", "wrapped", namespace) is not None
    listed = flarekit(fake, "cluster", "list", "-o", "json", namespace=namespace)
    assert [c["kind"] for c in json.loads(listed.out)["items"]] == ["AppWrapper"]
    named = flarekit(fake, "cluster", "list", "-o", "name", namespace=namespace)
    assert named.out == "appwrapper.workload.codeflare.dev/wrapped\n"
    assert flarekit(fake, "cluster", "down", "wrapped", "--wait", namespace=namespace).code == 0


def test_invalid_parameters_send_no_request(fake: FakeCluster, namespace: str) -> None:
    fake.clear_requests()
    result = flarekit(fake, "cluster", "apply", "bad", "--num-workers", "-3", "--worker-memory",
                      "lots", "--worker-cpu", "two", "--worker-gpus", "-1", namespace=namespace)  # fmt: skip
    assert result.code == ExitCode.VALIDATION_ERROR
    line = one_error_line(result)
    for field in ("num_workers", "worker_memory_requests", "worker_cpu_requests",
                  "worker_extended_resource_requests['nvidia.com/gpu']"):  # fmt: skip
        assert field in line
    assert fake.requests == []


def test_limits_below_requests_and_other_ray_version_are_refused(
    fake: FakeCluster, namespace: str
) -> None:
    fake.clear_requests()
    result = flarekit(fake, "cluster", "apply", "bad", "--set", "worker_memory_limits=1Gi",
                      "--set", "worker_memory_requests=4Gi", "--image", "rayproject/ray:2.9.0",
                      "--ray-version", "2.47.1", namespace=namespace)  # fmt: skip
    line = one_error_line(result)
    assert result.code == ExitCode.VALIDATION_ERROR
    assert "worker_memory_limits" in line and "image" in line
    assert fake.requests == []


def test_missing_local_queue_writes_nothing(fake: FakeCluster, namespace: str) -> None:
    fake.clear_requests()
    result = flarekit(fake, "cluster", "apply", "q", "--local-queue", "nope", namespace=namespace)
    assert result.code == ExitCode.VALIDATION_ERROR
    assert "local_queue='nope'" in one_error_line(result)
    assert [r for r in fake.requests if r.method not in ("GET",)] == []
    assert fake.get("rayclusters", "q", namespace) is None


def test_status_and_down_of_a_missing_cluster(fake: FakeCluster, namespace: str) -> None:
    status = flarekit(fake, "cluster", "status", "ghost", namespace=namespace)
    assert status.code == ExitCode.API_ERROR
    assert "ghost" in one_error_line(status)
    down = flarekit(fake, "cluster", "down", "ghost", namespace=namespace)
    assert down.code == ExitCode.API_ERROR
    ignored = flarekit(fake, "cluster", "down", "ghost", "--ignore-not-found", "-o", "name",
                       namespace=namespace)  # fmt: skip
    assert (ignored.code, ignored.out) == (0, "")  # nothing deleted: no name


def test_unknown_parameter_in_a_file_names_the_closest(fake: FakeCluster, tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("name: x\nnum_worker: 2\n")
    result = flarekit(fake, "cluster", "apply", "-f", str(config))
    assert result.code == ExitCode.VALIDATION_ERROR
    line = one_error_line(result)
    assert "num_worker=2: not a ClusterConfiguration parameter" in line
    assert "num_workers" in line


def test_port_forward_checks_its_ports_before_connecting() -> None:
    for bad in ("abc", "0", "70000", "1:2:3", "99999:10001"):
        result = flarekit(None, "cluster", "port-forward", "demo", bad)
        assert result.code == ExitCode.USAGE_ERROR, result
        line = one_error_line(result)
        assert "PORTS must be [LOCAL:]REMOTE" in line and repr(bad) in line


def test_port_forward_on_fakecluster_says_it_serves_none(fake: FakeCluster, namespace: str) -> None:
    # FakeCluster runs no containers (docs/fakecluster.md): the forward fails as it starts.
    applied = flarekit(fake, "cluster", "apply", "fwd", "--wait", "--timeout", "30",
                       namespace=namespace)  # fmt: skip
    assert applied.code == 0, applied
    result = flarekit(fake, "cluster", "port-forward", "fwd", "0:10001", namespace=namespace)
    assert result.code != 0
    assert "pods/portforward" in result.err
    assert "FakeCluster offers no port-forward" in result.err
    assert "Traceback" not in result.err
