"""KueueController: Workloads for queued jobs, pending reasons, admission, unsuspension."""

from __future__ import annotations

import pytest
from sim_support import (
    JSON,
    TICK,
    app_wrapper,
    cond,
    no_errors,
    ray_cluster,
    ray_job,
    status,
    train_job,
    validate,
    wait_for,
)

from flarekit_testing import (
    AppWrapperController,
    FakeCluster,
    KueueController,
    RayClusterController,
    RayJobController,
    TrainJobController,
)
from kube_support import kueue_api, seed_queues
from wait_support import wait_until

QUEUED = {"kueue.x-k8s.io/queue-name": "lq"}
WL = "workloads"


def _workload(fc: FakeCluster, namespace: str = "default") -> JSON:
    wait_until(lambda: bool(fc.objects(WL, namespace)), "a Workload exists")
    (found,) = fc.objects(WL, namespace)
    return found


def _reserved_message(fc: FakeCluster, message: str) -> None:
    def check() -> bool:
        found = cond(_workload(fc), "QuotaReserved")
        return found is not None and found["message"] == message

    wait_until(check, f"QuotaReserved says {message!r}")


@pytest.mark.parametrize("kueue", ["v0.10.6", "v0.19.2"])
def test_ray_cluster_waits_for_admission_then_becomes_ready(kueue: str) -> None:
    kueue_ctl = KueueController(pending=True)
    rays = RayClusterController()
    with FakeCluster(
        releases={"kuberay": "v1.7.0", "kueue": kueue},
        tick_interval=TICK,
        controllers=[rays, kueue_ctl],  # Kueue registered last on purpose
    ) as fc:
        seed_queues(fc, "default", flavor="default-flavor")
        fc.create(ray_cluster("rc", labels=QUEUED))
        workload = _workload(fc)
        assert workload["metadata"]["name"].startswith("raycluster-rc-")
        owner = workload["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("RayCluster", "rc", True)
        spec = workload["spec"]
        assert spec["queueName"] == "lq"
        assert [(p["name"], p["count"]) for p in spec["podSets"]] == [("head", 1), ("gpu", 2)]
        rays.wait_ticks(3)
        obj = fc.get("rayclusters", "rc") or {}
        assert obj["spec"]["suspend"] is True  # suspended as Kueue's webhook does
        assert status(obj).get("state") == "suspended"
        kueue_ctl.admit("rc")
        obj = wait_for(fc, "rayclusters", "rc", lambda o: status(o).get("state") == "ready")
        assert obj["spec"]["suspend"] is False
        workload = _workload(fc)
        admission = status(workload)["admission"]
        assert admission["clusterQueue"] == "cq"
        head, workers = admission["podSetAssignments"]
        assert head == {
            "name": "head",
            "count": 1,
            "flavors": {"cpu": "default-flavor", "memory": "default-flavor"},
            "resourceUsage": {"cpu": "1", "memory": "2Gi"},
        }
        assert workers["resourceUsage"] == {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "2"}
        for type_, reason in (("QuotaReserved", "QuotaReserved"), ("Admitted", "Admitted")):
            found = cond(workload, type_)
            assert found and (found["status"], found["reason"]) == ("True", reason)
        validate(workload)
        validate(obj)
        no_errors(fc)


def test_missing_local_queue_keeps_the_job_suspended() -> None:
    trainer = TrainJobController()
    with FakeCluster(
        releases={"kueue": "v0.19.2", "trainer": "v2.3.0"},
        tick_interval=TICK,
        controllers=[KueueController(), trainer],
    ) as fc:
        fc.create(train_job("tj", labels=QUEUED))
        _reserved_message(fc, "LocalQueue lq doesn't exist")
        reserved = cond(_workload(fc), "QuotaReserved")
        assert reserved and (reserved["status"], reserved["reason"]) == ("False", "Inadmissible")
        trainer.wait_ticks(3)
        obj = fc.get("trainjobs", "tj") or {}
        assert obj["spec"]["suspend"] is True
        assert cond(obj, "Complete") is None
        validate(_workload(fc))
        seed_queues(fc, "default", flavor="default-flavor")
        wait_for(
            fc, "trainjobs", "tj", lambda o: (cond(o, "Complete") or {}).get("status") == "True"
        )
        wait_until(lambda: cond(_workload(fc), "Finished") is not None, "the Workload is Finished")
        finished = cond(_workload(fc), "Finished")
        assert finished and finished["reason"] == "Succeeded"
        no_errors(fc)


def test_inactive_and_missing_cluster_queue_messages() -> None:
    with FakeCluster(
        releases={"kueue": "v0.19.2", "kuberay": "v1.7.0"},
        tick_interval=TICK,
        controllers=[KueueController()],
    ) as fc:
        seed_queues(
            fc, "default", make_flavor=False
        )  # the ClusterQueue names a flavor that does not exist
        fc.create(ray_cluster("rc", labels=QUEUED))
        _reserved_message(fc, "ClusterQueue cq is inactive")
        fc.delete("clusterqueues", "cq")
        _reserved_message(fc, "ClusterQueue cq doesn't exist")
        no_errors(fc)


def test_rayjob_is_queued_but_its_own_cluster_is_not() -> None:
    with FakeCluster(
        releases={"kueue": "v0.19.2", "kuberay": "v1.7.0"},
        tick_interval=TICK,
        controllers=[KueueController(), RayJobController()],
    ) as fc:
        seed_queues(fc, "default", flavor="default-flavor")
        fc.create(ray_job("job", labels=QUEUED, shutdownAfterJobFinishes=True))
        wait_for(fc, "rayjobs", "job", lambda o: status(o).get("jobDeploymentStatus") == "Complete")
        (workload,) = fc.objects(WL)
        names = [p["name"] for p in workload["spec"]["podSets"]]
        assert names == ["head", "gpu", "submitter"]
        validate(workload)
        no_errors(fc)


def test_app_wrapper_is_admitted_and_deploys() -> None:
    with FakeCluster(
        releases={"kueue": "v0.19.2", "kuberay": "v1.7.0", "appwrapper": "v1.2.1"},
        tick_interval=TICK,
        controllers=[KueueController(), AppWrapperController()],
    ) as fc:
        seed_queues(fc, "default", flavor="default-flavor")
        fc.create(app_wrapper("aw", labels=QUEUED))
        wait_for(fc, "appwrappers", "aw", lambda o: status(o).get("phase") == "Running")
        (workload,) = fc.objects(WL)
        assert [p["count"] for p in workload["spec"]["podSets"]] == [1, 2]
        assert fc.get("rayclusters", "aw-ray") is not None
        validate(workload)
        no_errors(fc)


def test_deleting_the_job_deletes_its_workload() -> None:
    with FakeCluster(
        releases={"kueue": "v0.19.2", "kuberay": "v1.7.0"},
        tick_interval=TICK,
        controllers=[KueueController()],
    ) as fc:
        fc.create(ray_cluster("rc", labels=QUEUED))
        _workload(fc)
        fc.delete("rayclusters", "rc")
        wait_until(lambda: fc.objects(WL) == [], "the Workload is deleted")
        no_errors(fc)


def test_unlabelled_jobs_are_left_alone() -> None:
    kueue_ctl = KueueController()
    with FakeCluster(
        releases={"kueue": "v0.19.2", "kuberay": "v1.7.0"},
        tick_interval=TICK,
        controllers=[kueue_ctl],
    ) as fc:
        fc.create(ray_cluster("rc"))
        kueue_ctl.wait_ticks(3)
        assert fc.objects(WL) == []
        assert "suspend" not in (fc.get("rayclusters", "rc") or {})["spec"]


def test_an_inactive_workload_is_evicted_and_its_job_suspended() -> None:
    with FakeCluster(
        releases={"kuberay": "v1.7.0", "kueue": "v0.19.2"},
        tick_interval=TICK,
        controllers=[RayClusterController(), KueueController()],
    ) as fc:
        seed_queues(fc, "default", flavor="default-flavor")
        fc.create(ray_cluster("rc", labels=QUEUED))
        wait_for(fc, "rayclusters", "rc", lambda o: o["spec"].get("suspend") is False)
        name = _workload(fc)["metadata"]["name"]
        fc.patch("workloads", name, {"spec": {"active": False}})
        wait_for(fc, "rayclusters", "rc", lambda o: o["spec"].get("suspend") is True)
        evicted = cond(_workload(fc), "Evicted") or {}
        assert (evicted.get("status"), evicted.get("reason")) == ("True", "Deactivated")
        assert cond(_workload(fc), "Admitted")["status"] == "False"  # type: ignore[index]
        assert "admission" not in status(_workload(fc))
        fc.patch("workloads", name, {"spec": {"active": True}})
        wait_for(fc, "rayclusters", "rc", lambda o: o["spec"].get("suspend") is False)
        assert cond(_workload(fc), "Admitted")["status"] == "True"  # type: ignore[index]


def test_queues_report_whether_they_can_be_used_as_kueue_does() -> None:
    """ClusterQueue and LocalQueue `Active` conditions, with Kueue v0.19's reasons and
    messages: inactive while a flavor is missing, active once it exists."""
    with FakeCluster(
        releases={"kueue": "v0.19.2"}, tick_interval=TICK, controllers=[KueueController()]
    ) as fc:
        seed_queues(fc, "default", flavor="default-flavor", make_flavor=False)

        def active(resource: str, name: str, namespace: str | None = None) -> JSON:
            obj = fc.get(resource, name, namespace) or {}
            return cond(obj, "Active") or {}

        wait_until(lambda: active("localqueues", "lq", "default").get("status") == "False", "")
        assert active("clusterqueues", "cq") | {"lastTransitionTime": None} == {
            "type": "Active",
            "status": "False",
            "reason": "FlavorNotFound",
            "message": "Can't admit new workloads: references missing ResourceFlavor(s): "
            "default-flavor.",
            "observedGeneration": 1,
            "lastTransitionTime": None,
        }
        local = active("localqueues", "lq", "default")
        assert (local["reason"], local["message"]) == (
            "ClusterQueueIsInactive",
            "Can't submit new workloads to clusterQueue",
        )
        fc.create(
            {
                "apiVersion": kueue_api(fc),
                "kind": "ResourceFlavor",
                "metadata": {"name": "default-flavor"},
            }
        )
        wait_until(lambda: active("localqueues", "lq", "default").get("status") == "True", "")
        assert active("localqueues", "lq", "default")["reason"] == "Ready"
        assert active("clusterqueues", "cq")["message"] == "Can admit new workloads"
        fc.delete("clusterqueues", "cq")
        wait_until(
            lambda: active("localqueues", "lq", "default").get("reason")
            == "ClusterQueueDoesNotExist",
            "the LocalQueue to see its ClusterQueue gone",
        )
        no_errors(fc)
