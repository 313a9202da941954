"""RayJobController: deployment and Ray job states, the job's own cluster, suspension."""

from __future__ import annotations

from typing import Any

from sim_support import TICK, no_errors, ray_cluster, ray_job, status, validate, wait_for

from flarekit_testing import (
    Event,
    FakeCluster,
    ManualClock,
    RayClusterController,
    RayJobController,
)
from wait_support import wait_until

RJ = "rayjobs"


class Recorder:
    """Records the (jobDeploymentStatus, jobStatus) pairs a RayJob goes through."""

    def __init__(self) -> None:
        self.states: list[tuple[Any, Any]] = []

    def on_event(self, cluster: FakeCluster, event: Event) -> None:
        if event.key[1] == "rayjobs" and event.type != "DELETED":
            s = event.obj.get("status") or {}
            pair = (s.get("jobDeploymentStatus"), s.get("jobStatus"))
            if not self.states or self.states[-1] != pair:
                self.states.append(pair)

    def on_tick(self, cluster: FakeCluster) -> None:
        pass


def test_runs_to_completion_through_kuberay_states() -> None:
    recorder = Recorder()
    with FakeCluster(
        releases={"kuberay": "v1.7.0"},
        tick_interval=TICK,
        controllers=[recorder, RayJobController(run_for=0.05)],
    ) as fc:
        fc.create(ray_job("job"))
        obj = wait_for(fc, RJ, "job", lambda o: status(o).get("jobDeploymentStatus") == "Complete")
        s = status(obj)
        assert s["jobStatus"] == "SUCCEEDED"
        assert s["rayClusterName"].startswith("job-")
        assert s["jobId"].startswith("job-")
        assert s["dashboardURL"] == f"{s['rayClusterName']}-head-svc.default.svc.cluster.local:8265"
        assert s["startTime"] and s["endTime"]
        assert s["succeeded"] == 1
        # the recorder sees events on the controller thread, a moment after the store
        wait_until(
            lambda: recorder.states[-1:] == [("Complete", "SUCCEEDED")],
            "the recorder sees Complete",
        )
        assert recorder.states == [
            (None, None),
            ("Initializing", None),
            ("Running", "PENDING"),
            ("Running", "RUNNING"),
            ("Complete", "SUCCEEDED"),
        ]
        owned = fc.get("rayclusters", s["rayClusterName"])
        assert owned is not None
        assert owned["metadata"]["ownerReferences"][0]["name"] == "job"
        assert owned["metadata"]["labels"]["ray.io/originated-from-crd"] == "RayJob"
        validate(obj)
        no_errors(fc)


def test_failure_has_reason_and_message() -> None:
    with FakeCluster(
        releases={"kuberay": "v1.7.0"},
        tick_interval=TICK,
        controllers=[RayJobController(fail=True, failure_message="boom")],
    ) as fc:
        fc.create(ray_job("job"))
        obj = wait_for(fc, RJ, "job", lambda o: status(o).get("jobDeploymentStatus") == "Failed")
        s = status(obj)
        assert (s["jobStatus"], s["reason"], s["message"], s["failed"]) == (
            "FAILED",
            "AppFailed",
            "boom",
            1,
        )
        validate(obj)
        no_errors(fc)


def test_waits_for_its_cluster_when_asked() -> None:
    clock = ManualClock()
    jobs = RayJobController(wait_for_cluster=True)
    with FakeCluster(
        releases={"kuberay": "v1.7.0"},
        tick_interval=TICK,
        controllers=[jobs, RayClusterController(ready_after=10, clock=clock)],
    ) as fc:
        fc.create(ray_job("job"))
        wait_for(fc, RJ, "job", lambda o: status(o).get("jobDeploymentStatus") == "Initializing")
        jobs.wait_ticks(3)
        obj = fc.get(RJ, "job")
        assert obj is not None and status(obj)["jobDeploymentStatus"] == "Initializing"
        clock.advance(10)
        obj = wait_for(fc, RJ, "job", lambda o: status(o).get("jobDeploymentStatus") == "Complete")
        assert status(obj)["rayClusterStatus"]["state"] == "ready"
        validate(obj)
        no_errors(fc)


def test_shutdown_after_finish_deletes_its_cluster() -> None:
    with FakeCluster(
        releases={"kuberay": "v1.7.0"}, tick_interval=TICK, controllers=[RayJobController()]
    ) as fc:
        fc.create(ray_job("job", shutdownAfterJobFinishes=True))
        obj = wait_for(fc, RJ, "job", lambda o: status(o).get("jobDeploymentStatus") == "Complete")
        name = status(obj)["rayClusterName"]
        wait_until(lambda: fc.get("rayclusters", name) is None, f"{name} is deleted")
        after = fc.get(RJ, "job")
        assert after is not None and status(after)["jobDeploymentStatus"] == "Complete"
        no_errors(fc)


def test_cluster_selector_uses_an_existing_cluster() -> None:
    with FakeCluster(
        releases={"kuberay": "v1.7.0"}, tick_interval=TICK, controllers=[RayJobController()]
    ) as fc:
        fc.create(ray_cluster("shared"))
        body = ray_job("job", clusterSelector={"ray.io/cluster": "shared"})
        del body["spec"]["rayClusterSpec"]
        fc.create(body)
        obj = wait_for(fc, RJ, "job", lambda o: status(o).get("jobDeploymentStatus") == "Complete")
        assert status(obj)["rayClusterName"] == "shared"
        assert [o["metadata"]["name"] for o in fc.objects("rayclusters")] == ["shared"]
        no_errors(fc)


def test_suspend_holds_and_resume_starts_over() -> None:
    jobs = RayJobController()
    with FakeCluster(releases={"kuberay": "v1.7.0"}, tick_interval=TICK, controllers=[jobs]) as fc:
        fc.create(ray_job("job", suspend=True))
        wait_for(fc, RJ, "job", lambda o: status(o).get("jobDeploymentStatus") == "Suspended")
        jobs.wait_ticks(3)
        assert fc.objects("rayclusters") == []
        fc.patch(RJ, "job", {"spec": {"suspend": False}})
        obj = wait_for(fc, RJ, "job", lambda o: status(o).get("jobDeploymentStatus") == "Complete")
        validate(obj)
        no_errors(fc)


def test_suspending_a_running_job_deletes_its_cluster() -> None:
    clock = ManualClock()
    with FakeCluster(
        releases={"kuberay": "v1.7.0"},
        tick_interval=TICK,
        controllers=[RayJobController(run_for=60, clock=clock)],
    ) as fc:
        fc.create(ray_job("job"))
        obj = wait_for(fc, RJ, "job", lambda o: status(o).get("jobStatus") == "RUNNING")
        name = status(obj)["rayClusterName"]
        fc.patch(RJ, "job", {"spec": {"suspend": True}})
        obj = wait_for(fc, RJ, "job", lambda o: status(o).get("jobDeploymentStatus") == "Suspended")
        assert fc.get("rayclusters", name) is None
        assert "rayClusterName" not in status(obj)
        validate(obj)
        no_errors(fc)


def test_deleting_the_job_deletes_its_cluster() -> None:
    with FakeCluster(
        releases={"kuberay": "v1.7.0"}, tick_interval=TICK, controllers=[RayJobController()]
    ) as fc:
        fc.create(ray_job("job"))
        obj = wait_for(fc, RJ, "job", lambda o: bool(status(o).get("rayClusterName")))
        name = status(obj)["rayClusterName"]
        fc.delete(RJ, "job")
        wait_until(lambda: fc.get("rayclusters", name) is None, f"{name} is deleted")
        no_errors(fc)
