"""Simulated operators make pods as the real ones label them, and the pods print logs."""

from __future__ import annotations

import pytest
from sim_support import JSON, TICK, no_errors, ray_cluster, ray_job, status, train_job, wait_for

from flarekit_testing import (
    FakeCluster,
    ManualClock,
    RayClusterController,
    RayJobController,
    TrainJobController,
)
from wait_support import wait_until


def labels(pod: JSON) -> dict[str, str]:
    return dict(pod["metadata"].get("labels") or {})


def pods(fc: FakeCluster, key: str, value: str) -> list[JSON]:
    return [p for p in fc.objects("pods", "default") if labels(p).get(key) == value]


def phase(pod: JSON) -> str:
    return str((pod.get("status") or {}).get("phase"))


def test_raycluster_pods_follow_the_cluster() -> None:
    clock = ManualClock()
    controller = RayClusterController(
        ready_after=5, clock=clock, logs=lambda c, p: [f"hello from {labels(p)['ray.io/group']}"]
    )
    with FakeCluster(
        releases={"kuberay": "v1.7.0"}, tick_interval=TICK, controllers=[controller]
    ) as fc:
        fc.create(ray_cluster("rc"))
        wait_until(lambda: len(fc.objects("pods", "default")) == 3, "the pods exist")
        every = fc.objects("pods", "default")
        assert {phase(p) for p in every} == {"Pending"}
        kinds = sorted((labels(p)["ray.io/node-type"], labels(p)["ray.io/group"]) for p in every)
        assert kinds == [("head", "headgroup"), ("worker", "gpu"), ("worker", "gpu")]
        head = next(p for p in every if labels(p)["ray.io/node-type"] == "head")
        assert labels(head)["ray.io/cluster"] == "rc"
        assert labels(head)["ray.io/identifier"] == "rc-head"
        assert head["metadata"]["ownerReferences"][0]["kind"] == "RayCluster"
        assert head["spec"]["containers"][0]["name"] == "ray-head"
        clock.advance(5)
        ready = wait_for(fc, "rayclusters", "rc", lambda o: status(o).get("state") == "ready")
        assert status(ready)["head"]["podName"] == head["metadata"]["name"]
        wait_until(
            lambda: "hello from headgroup" in fc.read_log("default", head["metadata"]["name"]),
            "the head logs",
        )
        assert {phase(p) for p in fc.objects("pods", "default")} == {"Running"}
        fc.patch(
            "rayclusters",
            "rc",
            {
                "spec": {
                    "workerGroupSpecs": [{**ready["spec"]["workerGroupSpecs"][0], "replicas": 1}]
                }
            },
        )
        wait_until(lambda: len(fc.objects("pods", "default")) == 2, "a worker is removed")
        fc.delete("rayclusters", "rc")
        wait_until(lambda: fc.objects("pods", "default") == [], "the pods are gone")
        no_errors(fc)


def test_rayjob_submitter_prints_the_job_output() -> None:
    clock = ManualClock()
    jobs = RayJobController(run_for=10, clock=clock, logs=lambda job, pod: ["step 1", "step 2"])
    with FakeCluster(releases={"kuberay": "v1.7.0"}, tick_interval=TICK, controllers=[jobs]) as fc:
        fc.create(ray_job("rj"))
        wait_for(fc, "rayjobs", "rj", lambda o: status(o).get("jobStatus") == "RUNNING")
        wait_until(lambda: len(pods(fc, "job-name", "rj")) == 1, "the submitter pod exists")
        pod = pods(fc, "job-name", "rj")[0]
        assert labels(pod)["batch.kubernetes.io/job-name"] == "rj"
        assert labels(pod)["controller-uid"] == labels(pod)["batch.kubernetes.io/controller-uid"]
        assert pod["metadata"]["ownerReferences"][0]["kind"] == "Job"
        assert pod["spec"]["containers"][0]["name"] == "ray-job-submitter"
        name = pod["metadata"]["name"]
        # KubeRay's submitter command, which local execution runs for real
        assert pod["spec"]["containers"][0]["command"] == ["/bin/bash", "-ce", "--"]
        assert "ray job submit --address http://" in pod["spec"]["containers"][0]["args"][0]
        wait_until(lambda: "step 1" in fc.read_log("default", name), "the job's first line")
        clock.advance(10)
        done = wait_for(fc, "rayjobs", "rj", lambda o: status(o).get("jobStatus") == "SUCCEEDED")
        text = fc.read_log("default", name)
        assert text.startswith("step 1\nstep 2\n")  # the test's lines, as given
        assert text.rstrip().endswith(
            "[simulated] RayJob rj: the simulation reports it SUCCEEDED (nothing ran)"
        )
        assert "submitted successfully" not in text  # no imitation of Ray's own output
        assert status(done)["jobId"]
        assert phase(fc.get("pods", name, "default") or {}) == "Succeeded"
        fc.delete("rayjobs", "rj")
        wait_until(lambda: pods(fc, "job-name", "rj") == [], "the submitter pod is gone")
        no_errors(fc)


def test_failed_rayjob_fails_its_submitter_and_http_mode_has_none() -> None:
    jobs = RayJobController(fail=True, failure_message="boom")
    with FakeCluster(releases={"kuberay": "v1.7.0"}, tick_interval=TICK, controllers=[jobs]) as fc:
        fc.create(ray_job("bad"))
        fc.create(ray_job("http", submissionMode="HTTPMode"))
        wait_for(fc, "rayjobs", "bad", lambda o: status(o).get("jobStatus") == "FAILED")
        wait_for(fc, "rayjobs", "http", lambda o: status(o).get("jobStatus") == "FAILED")
        pod = pods(fc, "job-name", "bad")[0]
        assert phase(pod) == "Failed"
        text = fc.read_log("default", pod["metadata"]["name"])
        assert text.startswith("[simulated] RayJob bad: KubeRay's submitter pod is simulated")
        assert text.rstrip().endswith(
            "[simulated] RayJob bad: the simulation reports it FAILED: boom (nothing ran)"
        )
        assert pods(fc, "job-name", "http") == []
        no_errors(fc)


def test_trainjob_node_pods_carry_jobset_labels_and_node_logs() -> None:
    clock = ManualClock()
    trainer = TrainJobController(
        run_for=10, clock=clock,
        logs=lambda job, pod: [f"node {labels(pod)['batch.kubernetes.io/job-completion-index']}"],
    )  # fmt: skip
    with FakeCluster(
        releases={"trainer": "v2.3.0"}, tick_interval=TICK, controllers=[trainer]
    ) as fc:
        fc.create(train_job("tj"))
        wait_until(lambda: len(pods(fc, "jobset.sigs.k8s.io/jobset-name", "tj")) == 2, "two nodes")
        nodes = sorted(fc.objects("pods", "default"), key=lambda p: p["metadata"]["name"])
        for index, pod in enumerate(nodes):
            mine = labels(pod)
            assert mine["jobset.sigs.k8s.io/jobset-name"] == "tj"
            assert mine["jobset.sigs.k8s.io/replicatedjob-name"] == "node"
            assert mine["batch.kubernetes.io/job-completion-index"] == str(index)
            assert mine["job-name"] == "tj-node-0"
            assert pod["spec"]["containers"][0]["image"] == "pytorch/pytorch:2.5.0"
        names = [p["metadata"]["name"] for p in nodes]
        wait_until(lambda: fc.read_log("default", names[1]) == "node 1\n", "node 1 logs")
        clock.advance(10)
        wait_until(
            lambda: {phase(p) for p in fc.objects("pods", "default")} == {"Succeeded"}, "the end"
        )
        assert fc.read_log("default", names[0]) == "node 0\n"
        fc.patch("trainjobs", "tj", {"metadata": {"labels": {"x": "y"}}})
        fc.delete("trainjobs", "tj")
        wait_until(lambda: fc.objects("pods", "default") == [], "the pods are gone")
        no_errors(fc)


@pytest.mark.parametrize("failing", [False, True])
def test_trainjob_default_logs_and_suspension(failing: bool) -> None:
    trainer = TrainJobController(run_for=0 if failing else 3600, fail=failing)
    with FakeCluster(
        releases={"trainer": "v2.3.0"}, tick_interval=TICK, controllers=[trainer]
    ) as fc:
        fc.create(train_job("tj"))
        if failing:
            wait_until(
                lambda: {phase(p) for p in fc.objects("pods", "default")} == {"Failed"}, "failure"
            )
            name = fc.objects("pods", "default")[0]["metadata"]["name"]
            assert fc.read_log("default", name).startswith(
                "[simulated] TrainJob tj node 0: started"
            )
        else:
            wait_until(lambda: len(fc.objects("pods", "default")) == 2, "two nodes")
            # a pod nobody owns is not garbage-collected, whatever its labels
            fc.add_pod("default", "stray", labels={"jobset.sigs.k8s.io/jobset-name": "tj"})
            fc.patch("trainjobs", "tj", {"spec": {"suspend": True}})
            wait_until(
                lambda: [p["metadata"]["name"] for p in fc.objects("pods", "default")] == ["stray"],
                "suspension removes the job's own pods",
            )
        no_errors(fc)
