"""``flarekit job ...`` for TrainJobs and RayJobs against FakeCluster with simulated operators."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cli_support import flarekit, one_error_line, torch_runtime

from flarekit.cli import ExitCode
from flarekit_testing import FakeCluster, KueueController, TrainJobController
from kube_support import seed_queues
from wait_support import wait_until


def test_trainjob_submit_wait_logs_list_delete(fake: FakeCluster, namespace: str) -> None:
    submitted = flarekit(fake, "job", "submit", "train", "--kind", "trainjob", "--num-nodes", "2",
                         "--cpu", "2", "--memory", "4Gi", "--env", "EPOCHS=3", "--wait",
                         "--timeout", "30", "--", "python", "train.py", "--epochs", "3",
                         namespace=namespace)  # fmt: skip
    assert submitted.code == 0, submitted
    assert "Succeeded" in submitted.out
    stored = fake.get("trainjobs", "train", namespace)
    assert stored is not None
    trainer = stored["spec"]["trainer"]
    assert trainer["command"] == ["python", "train.py", "--epochs", "3"]
    assert trainer["numNodes"] == 2
    assert trainer["resourcesPerNode"]["requests"] == {"cpu": "2", "memory": "4Gi"}
    assert trainer["env"] == [{"name": "EPOCHS", "value": "3"}]
    assert stored["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "lq"

    logs = flarekit(fake, "job", "logs", "train", namespace=namespace)
    assert logs.code == 0, logs
    assert "[simulated] TrainJob train node 0: started" in logs.out
    second = flarekit(fake, "job", "logs", "train", "--node", "1", namespace=namespace)
    assert second.out.startswith("[simulated] TrainJob train node 1")
    followed = flarekit(fake, "job", "logs", "train", "--follow", namespace=namespace)
    assert followed.code == 0 and followed.out == logs.out

    listed = flarekit(fake, "job", "list", namespace=namespace)
    *row, age = listed.out.splitlines()[-1].split()
    assert row == ["train", "TrainJob", "Succeeded", "(AllJobsCompleted)", "lq"]
    assert age.endswith("s"), age  # AGE: seconds since it was created
    # -o yaml|json print the TrainJob as stored, as kubectl would
    as_list = yaml.safe_load(flarekit(fake, "job", "list", "-o", "yaml", namespace=namespace).out)
    assert (as_list["kind"], len(as_list["items"])) == ("List", 1)
    assert as_list["items"][0] == fake.get("trainjobs", "train", namespace)
    status = flarekit(fake, "job", "status", "train", "-o", "json", namespace=namespace)
    assert json.loads(status.out) == fake.get("trainjobs", "train", namespace)
    named = flarekit(fake, "job", "status", "train", "-o", "name", namespace=namespace)
    assert named.out == "trainjob.trainer.kubeflow.org/train\n"

    deleted = flarekit(fake, "job", "delete", "train", namespace=namespace)
    assert deleted.code == 0 and f"TrainJob {namespace}/train deleted" in deleted.out
    assert fake.get("trainjobs", "train", namespace) is None


def test_trainjob_from_a_file(fake: FakeCluster, namespace: str, tmp_path: Path) -> None:
    spec = tmp_path / "job.yaml"
    spec.write_text(
        "kind: TrainJob\nname: filed\nimage: example.com/train:2\nnum_nodes: 1\n"
        "command: [python, run.py]\nlabels: {team: ml}\n"
    )
    submitted = flarekit(fake, "job", "submit", "-f", str(spec), namespace=namespace)
    assert submitted.code == 0, submitted
    stored = fake.get("trainjobs", "filed", namespace)
    assert stored is not None
    assert stored["spec"]["trainer"]["image"] == "example.com/train:2"
    assert stored["spec"]["trainer"]["command"] == ["python", "run.py"]
    assert stored["metadata"]["labels"]["team"] == "ml"
    assert flarekit(fake, "job", "delete", "filed", namespace=namespace).code == 0


@pytest.fixture(scope="module")
def slow() -> Iterator[FakeCluster]:
    """Training jobs that run until stopped, under Kueue (which owns spec.suspend)."""
    with FakeCluster(
        tick_interval=0.02, controllers=[KueueController(), TrainJobController(run_for=3600)]
    ) as fc:
        seed_queues(fc, "default")
        fc.create(torch_runtime())
        yield fc


def _state(fc: FakeCluster, name: str) -> str:
    first = flarekit(fc, "job", "status", name).out.splitlines()[0]  # TrainJob ns/name: State
    return first.partition(": ")[2].split()[0]


def test_stop_deactivates_the_workload_of_a_queued_trainjob(slow: FakeCluster) -> None:
    started = flarekit(slow, "job", "submit", "long", "--kind", "trainjob", "--local-queue", "lq")
    assert started.code == 0, started
    wait_until(lambda: _state(slow, "long") == "Running", "the job runs", poll=0.02)
    before = len(slow.requests)
    stopped = flarekit(slow, "job", "stop", "long")
    assert stopped.code == 0, stopped
    workloads = slow.objects("workloads", "default")
    assert [w["spec"].get("active") for w in workloads] == [False]
    # Kueue owns spec.suspend of a queued job: the CLI leaves it to Kueue's eviction
    patched = {r.path.rsplit("/", 2)[-2] for r in slow.requests[before:] if r.method == "PATCH"}
    assert patched == {"workloads"}
    assert flarekit(slow, "job", "delete", "long").code == 0


def test_stop_suspends_a_trainjob_outside_any_queue(slow: FakeCluster) -> None:
    runtime = {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime",
               "name": "torch-distributed"}  # fmt: skip
    slow.create({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                 "metadata": {"name": "unqueued", "namespace": "default"},
                 "spec": {"runtimeRef": runtime}})  # fmt: skip
    wait_until(lambda: _state(slow, "unqueued") == "Running", "the job runs", poll=0.02)
    stopped = flarekit(slow, "job", "stop", "unqueued", "-o", "json")
    assert stopped.code == 0, stopped
    assert json.loads(stopped.out)["spec"]["suspend"] is True  # the object as stored
    assert (slow.get("trainjobs", "unqueued") or {})["spec"]["suspend"] is True
    wait_until(lambda: _state(slow, "unqueued") == "Suspended", "the job is suspended", poll=0.02)
    assert flarekit(slow, "job", "delete", "unqueued").code == 0


def test_rayjob_on_a_cluster(fake: FakeCluster, namespace: str) -> None:
    assert flarekit(fake, "cluster", "apply", "ray", "--wait", namespace=namespace).code == 0
    submitted = flarekit(fake, "job", "submit", "hello", "--kind", "rayjob", "--cluster-name",
                         "ray", "--env", "GREETING=hi", "--wait", "--timeout", "30", "--",
                         "python", "-c", "print('hi there')", namespace=namespace)  # fmt: skip
    assert submitted.code == 0, submitted
    stored = fake.get("rayjobs", "hello", namespace)
    assert stored is not None
    assert stored["spec"]["entrypoint"] == "python -c 'print('\"'\"'hi there'\"'\"')'"
    assert stored["spec"]["clusterSelector"] == {"ray.io/cluster": "ray"}
    logs = flarekit(fake, "job", "logs", "hello", namespace=namespace)
    assert logs.code == 0 and "RayJob hello: the simulation reports it SUCCEEDED" in logs.out
    status = flarekit(fake, "job", "status", "hello", "--kind", "rayjob", "-o", "json",
                      namespace=namespace)  # fmt: skip
    assert json.loads(status.out)["status"]["jobStatus"] == "SUCCEEDED"
    listed = flarekit(fake, "job", "list", namespace=namespace)
    assert "hello  RayJob" in listed.out
    # KubeRay cannot suspend a job on an existing cluster: one clear line, API error
    stopped = flarekit(fake, "job", "stop", "hello", namespace=namespace)
    assert stopped.code == 0  # finished jobs are left as they are
    assert flarekit(fake, "job", "delete", "hello", namespace=namespace).code == 0
    assert flarekit(fake, "cluster", "down", "ray", "--wait", namespace=namespace).code == 0


def test_rayjob_with_its_own_cluster_from_a_file(
    fake: FakeCluster, namespace: str, tmp_path: Path
) -> None:
    spec = tmp_path / "rayjob.yaml"
    spec.write_text(
        "kind: rayjob\nname: owned\nentrypoint: python train.py\n"
        "cluster_config: {num_workers: 1, worker_memory_requests: 1Gi}\n"
    )
    submitted = flarekit(fake, "job", "submit", "-f", str(spec), namespace=namespace)
    assert submitted.code == 0, submitted
    stored = fake.get("rayjobs", "owned", namespace)
    assert stored is not None
    assert stored["spec"]["shutdownAfterJobFinishes"] is True
    assert stored["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "lq"
    assert flarekit(fake, "job", "delete", "owned", namespace=namespace).code == 0


def test_codeflare_measured_inputs_are_refused_before_any_request(
    fake: FakeCluster, namespace: str
) -> None:
    fake.clear_requests()
    train = flarekit(fake, "job", "submit", "t", "--kind", "trainjob", "--num-nodes", "-2",
                     "--memory", "lots", namespace=namespace)  # fmt: skip
    assert train.code == ExitCode.VALIDATION_ERROR
    line = one_error_line(train)
    assert "num_nodes=-2" in line and "resources_per_node['memory']='lots'" in line
    ray = flarekit(fake, "job", "submit", "r", "--kind", "rayjob", "--set",
                   "cluster_config={num_workers: -3}", "--", "python", "x.py",
                   namespace=namespace)  # fmt: skip
    assert ray.code == ExitCode.VALIDATION_ERROR
    assert "num_workers=-3" in one_error_line(ray)
    assert fake.requests == []


def test_missing_queue_and_runtime_are_validation_errors(fake: FakeCluster, namespace: str) -> None:
    queue = flarekit(fake, "job", "submit", "q", "--kind", "trainjob", "--local-queue", "nope",
                     namespace=namespace)  # fmt: skip
    assert queue.code == ExitCode.VALIDATION_ERROR
    assert "local_queue='nope'" in one_error_line(queue)
    runtime = flarekit(fake, "job", "submit", "q", "--kind", "trainjob", "--runtime", "jax-x",
                       namespace=namespace)  # fmt: skip
    assert runtime.code == ExitCode.VALIDATION_ERROR
    assert "runtime='jax-x'" in one_error_line(runtime)
    assert fake.get("trainjobs", "q", namespace) is None


def test_job_usage_errors(fake: FakeCluster, namespace: str) -> None:
    no_kind = flarekit(fake, "job", "submit", "x", "--", "python", namespace=namespace)
    assert no_kind.code == ExitCode.USAGE_ERROR
    assert "--kind rayjob or --kind trainjob" in one_error_line(no_kind)
    wrong_flag = flarekit(fake, "job", "submit", "x", "--kind", "rayjob", "--num-nodes", "2",
                          "--", "python", namespace=namespace)  # fmt: skip
    assert wrong_flag.code == ExitCode.USAGE_ERROR
    assert "--num-nodes: not a rayjob option" in one_error_line(wrong_flag)
    no_entrypoint = flarekit(fake, "job", "submit", "x", "--kind", "rayjob", namespace=namespace)
    assert no_entrypoint.code == ExitCode.USAGE_ERROR
    follow_json = flarekit(fake, "job", "logs", "x", "--follow", "-o", "json")
    assert follow_json.code == ExitCode.USAGE_ERROR  # a log is text: no -o json
    trailing = flarekit(fake, "job", "list", "--", "oops")
    assert trailing.code == ExitCode.USAGE_ERROR
    assert "unexpected arguments after --" in one_error_line(trailing)


def test_unknown_job_and_ambiguous_names(fake: FakeCluster, namespace: str) -> None:
    missing = flarekit(fake, "job", "status", "ghost", namespace=namespace)
    assert missing.code == ExitCode.API_ERROR
    assert one_error_line(missing) == (
        f"error: no RayJob or TrainJob named 'ghost' in namespace '{namespace}'"
    )
    assert flarekit(fake, "job", "delete", "ghost", "--ignore-not-found",
                    namespace=namespace).code == 0  # fmt: skip
    assert flarekit(fake, "cluster", "apply", "c", namespace=namespace).code == 0
    ray = flarekit(fake, "job", "submit", "twin", "--kind", "rayjob", "--cluster-name", "c",
                   "--", "true", namespace=namespace)  # fmt: skip
    train = flarekit(fake, "job", "submit", "twin", "--kind", "trainjob", "--set", "suspend=true",
                     namespace=namespace)  # fmt: skip
    assert ray.code == 0 and train.code == 0, (ray, train)
    ambiguous = flarekit(fake, "job", "status", "twin", namespace=namespace)
    assert ambiguous.code == ExitCode.USAGE_ERROR
    assert "add --kind rayjob or --kind trainjob" in one_error_line(ambiguous)
    for kind in ("rayjob", "trainjob"):
        assert flarekit(fake, "job", "delete", "twin", "--kind", kind,
                        namespace=namespace).code == 0  # fmt: skip
    assert flarekit(fake, "cluster", "down", "c", namespace=namespace).code == 0
