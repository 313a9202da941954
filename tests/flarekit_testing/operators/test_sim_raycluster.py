"""RayClusterController: ready on schedule, failure, suspension, across KubeRay releases."""

from __future__ import annotations

import pytest
from sim_support import TICK, cond, no_errors, ray_cluster, status, validate, wait_for

from flarekit_testing import FakeCluster, ManualClock, RayClusterController

RC = "rayclusters"


@pytest.mark.parametrize("release", ["v1.1.1", "v1.4.2", "v1.7.0"])
def test_ready_as_kuberay_reports_it(release: str) -> None:
    with FakeCluster(
        releases={"kuberay": release},
        tick_interval=TICK,
        controllers=[RayClusterController(ready_after=0.05)],
    ) as fc:
        fc.create(ray_cluster("rc"))
        obj = wait_for(fc, RC, "rc", lambda o: status(o).get("state") == "ready")
        s = status(obj)
        assert s["desiredWorkerReplicas"] == 2
        assert s["availableWorkerReplicas"] == 2
        assert (s["desiredCPU"], s["desiredMemory"], s["desiredGPU"]) == ("2", "4Gi", "2")
        assert s["endpoints"] == {  # the head Service's ports (KubeRay's defaults)
            "client": "10001",
            "dashboard": "8265",
            "gcs-server": "6379",
            "metrics": "8080",
            "serve": "8000",
        }
        service = fc.get("services", "rc-head-svc", "default")  # headless, KubeRay's ports
        assert service is not None and service["spec"]["clusterIP"] == "None"
        assert [p["name"] for p in service["spec"]["ports"]] == sorted(s["endpoints"])
        assert service["metadata"]["ownerReferences"][0]["uid"] == obj["metadata"]["uid"]
        assert s["head"]["podIP"].startswith("10.244.")
        assert s["head"]["serviceIP"] == s["head"]["podIP"]  # a headless Service
        assert s["observedGeneration"] == obj["metadata"]["generation"]
        if release == "v1.1.1":  # no conditions or readyWorkerReplicas in that release's CRD
            assert "conditions" not in s and "readyWorkerReplicas" not in s
        else:
            assert s["readyWorkerReplicas"] == 2
            assert s["head"]["serviceName"] == "rc-head-svc"
            provisioned, head = cond(obj, "RayClusterProvisioned"), cond(obj, "HeadPodReady")
            assert provisioned and provisioned["status"] == "True"
            assert provisioned["reason"] == "AllPodRunningAndReadyFirstTime"
            assert head and (head["status"], head["reason"]) == ("True", "HeadPodRunningAndReady")
            # in KubeRay's order, and without observedGeneration, as KubeRay writes them
            types = [c["type"] for c in s["conditions"]]
            assert types == [
                "HeadPodReady",
                "RayClusterProvisioned",
                "RayClusterSuspended",
                "RayClusterSuspending",
            ]
            assert not any("observedGeneration" in c for c in s["conditions"])
        validate(obj)
        no_errors(fc)


def test_not_ready_before_its_time() -> None:
    clock = ManualClock()
    controller = RayClusterController(ready_after=30, clock=clock)
    with FakeCluster(releases={"kuberay": "v1.7.0"}, tick_interval=TICK) as fc:
        fc.add_controller(controller)
        fc.create(ray_cluster("rc"))
        controller.wait_ticks(3)
        obj = fc.get(RC, "rc")
        assert obj is not None
        assert "state" not in status(obj)
        provisioned = cond(obj, "RayClusterProvisioned")
        assert provisioned and provisioned["reason"] == "RayClusterPodsProvisioning"
        validate(obj)
        clock.advance(30)
        wait_for(fc, RC, "rc", lambda o: status(o).get("state") == "ready")
        no_errors(fc)


def test_named_head_ports_become_endpoints() -> None:
    with FakeCluster(
        releases={"kuberay": "v1.7.0"}, tick_interval=TICK, controllers=[RayClusterController()]
    ) as fc:
        body = ray_cluster("rc")
        head = body["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
        head["ports"] = [{"name": "serve", "containerPort": 8000}]
        fc.create(body)
        obj = wait_for(fc, RC, "rc", lambda o: status(o).get("state") == "ready")
        assert status(obj)["endpoints"]["serve"] == "8000"


def test_failure_only_for_the_chosen_clusters() -> None:
    controller = RayClusterController(
        fail_after=0.0, fail_when=lambda o: o["metadata"]["name"].startswith("bad")
    )
    with FakeCluster(
        releases={"kuberay": "v1.7.0"}, tick_interval=TICK, controllers=[controller]
    ) as fc:
        fc.create(ray_cluster("bad-1"))
        fc.create(ray_cluster("good"))
        bad = wait_for(fc, RC, "bad-1", lambda o: status(o).get("state") == "failed")
        assert status(bad)["reason"] == "simulated failure: the head Pod could not be created"
        failure = cond(bad, "ReplicaFailure")
        assert failure and (failure["status"], failure["reason"]) == ("True", "FailedCreateHeadPod")
        good = wait_for(fc, RC, "good", lambda o: status(o).get("state") == "ready")
        validate(bad)
        validate(good)
        no_errors(fc)


def test_suspended_cluster_stays_suspended_and_resumes() -> None:
    controller = RayClusterController()
    with FakeCluster(
        releases={"kuberay": "v1.7.0"}, tick_interval=TICK, controllers=[controller]
    ) as fc:
        fc.create(ray_cluster("rc", suspend=True))
        wait_for(fc, RC, "rc", lambda o: status(o).get("state") == "suspended")
        controller.wait_ticks(3)
        obj = fc.get(RC, "rc")
        assert obj is not None and status(obj)["state"] == "suspended"
        suspended = cond(obj, "RayClusterSuspended")
        assert suspended and suspended["status"] == "True"
        validate(obj)
        fc.patch(RC, "rc", {"spec": {"suspend": False}})
        obj = wait_for(fc, RC, "rc", lambda o: status(o).get("state") == "ready")
        suspended = cond(obj, "RayClusterSuspended")
        assert suspended and suspended["status"] == "False"
        no_errors(fc)


def test_spec_change_updates_observed_generation_and_counts() -> None:
    with FakeCluster(
        releases={"kuberay": "v1.7.0"}, tick_interval=TICK, controllers=[RayClusterController()]
    ) as fc:
        fc.create(ray_cluster("rc"))
        wait_for(fc, RC, "rc", lambda o: status(o).get("state") == "ready")
        groups = ray_cluster("rc")["spec"]["workerGroupSpecs"]
        groups[0]["replicas"] = 3
        fc.patch(RC, "rc", {"spec": {"workerGroupSpecs": groups}})
        obj = wait_for(fc, RC, "rc", lambda o: status(o).get("observedGeneration") == 2)
        assert status(obj)["desiredWorkerReplicas"] == 3


def test_negative_schedule_is_rejected() -> None:
    with pytest.raises(ValueError, match="ready_after must be a number of seconds >= 0"):
        RayClusterController(ready_after=-1)


def test_head_pod_ready_before_the_cluster_is() -> None:
    """KubeRay reports the head pod ready in one status write and `state: ready` in a later
    one, never both at once."""
    with FakeCluster(releases={"kuberay": "v1.4.2"}, tick_interval=TICK) as fc:
        seen: list[tuple[str | None, str | None]] = []
        fc.store.on_commit.append(
            lambda e: (
                seen.append(
                    (
                        status(e.obj).get("state"),
                        (cond(e.obj, "HeadPodReady") or {}).get("status"),
                    )
                )
                if e.key[1] == "rayclusters"
                else None
            )
        )
        fc.add_controller(RayClusterController())
        fc.create(ray_cluster("rc"))
        wait_for(fc, RC, "rc", lambda o: status(o).get("state") == "ready")
        first_head_ready = seen.index(next(s for s in seen if s[1] == "True"))
        assert seen[first_head_ready][0] is None  # head ready, the cluster not yet
        assert ("ready", "True") in seen[first_head_ready + 1 :]
        no_errors(fc)
