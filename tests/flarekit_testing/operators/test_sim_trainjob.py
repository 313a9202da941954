"""TrainJobController: Trainer's conditions and jobsStatus, on both pinned Trainer releases."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sim_support import JSON, TICK, cond, no_errors, status, train_job, validate, wait_for

from flarekit_testing import FakeCluster, ManualClock, TrainJobController
from wait_support import wait_until

TJ = "trainjobs"


def _true(type_: str) -> Callable[[JSON], bool]:
    return lambda o: (cond(o, type_) or {}).get("status") == "True"


@pytest.mark.parametrize("release", ["v2.0.1", "v2.3.0"])
def test_completes_as_trainer_reports_it(release: str) -> None:
    clock = ManualClock()
    controller = TrainJobController(run_for=5, clock=clock)
    with FakeCluster(
        releases={"trainer": release}, tick_interval=TICK, controllers=[controller]
    ) as fc:
        fc.create(train_job("tj"))
        running = wait_for(fc, TJ, "tj", lambda o: bool(status(o).get("jobsStatus")))
        assert status(running)["jobsStatus"] == [
            {"name": "node", "active": 1, "ready": 1, "succeeded": 0, "failed": 0, "suspended": 0}
        ]
        assert cond(running, "Complete") is None
        validate(running)
        clock.advance(5)
        done = wait_for(fc, TJ, "tj", _true("Complete"))
        complete = cond(done, "Complete")
        assert complete and complete["reason"] == "AllJobsCompleted"
        assert complete["message"] == "jobset completed successfully"
        assert status(done)["jobsStatus"][0]["succeeded"] == 1
        assert cond(done, "Created") is None  # Trainer 2.x has no Created condition
        validate(done)
        no_errors(fc)


def test_failure() -> None:
    with FakeCluster(
        releases={"trainer": "v2.3.0"},
        tick_interval=TICK,
        controllers=[TrainJobController(fail_when=lambda o: o["metadata"]["name"] == "bad")],
    ) as fc:
        fc.create(train_job("bad"))
        fc.create(train_job("good"))
        bad = wait_for(fc, TJ, "bad", _true("Failed"))
        failed = cond(bad, "Failed")
        assert failed and failed["reason"] == "FailedJobs"
        assert status(bad)["jobsStatus"][0]["failed"] == 1
        wait_for(fc, TJ, "good", _true("Complete"))
        validate(bad)
        no_errors(fc)


def test_suspended_then_resumed() -> None:
    controller = TrainJobController()
    with FakeCluster(
        releases={"trainer": "v2.3.0"}, tick_interval=TICK, controllers=[controller]
    ) as fc:
        fc.create(train_job("tj", suspend=True))
        obj = wait_for(fc, TJ, "tj", _true("Suspended"))
        controller.wait_ticks(3)
        obj = fc.get(TJ, "tj") or {}
        assert cond(obj, "Complete") is None
        assert status(obj)["jobsStatus"][0]["suspended"] == 1
        validate(obj)
        fc.patch(TJ, "tj", {"spec": {"suspend": False}})
        done = wait_for(fc, TJ, "tj", _true("Complete"))
        resumed = cond(done, "Suspended")
        assert resumed and (resumed["status"], resumed["reason"]) == ("False", "Resumed")
        no_errors(fc)


def test_job_names_come_from_the_runtime_when_it_exists() -> None:
    with FakeCluster(
        releases={"trainer": "v2.3.0", "jobset": "v0.12.0"},
        tick_interval=TICK,
        controllers=[TrainJobController()],
    ) as fc:
        template = {"spec": {"template": {"spec": {"containers": [{"name": "n", "image": "i"}]}}}}
        fc.create(
            {
                "apiVersion": "trainer.kubeflow.org/v1alpha1",
                "kind": "ClusterTrainingRuntime",
                "metadata": {"name": "torch-distributed"},
                "spec": {
                    "template": {
                        "spec": {
                            "replicatedJobs": [
                                {"name": "dataset-initializer", "template": template},
                                {"name": "node", "template": template},
                            ]
                        }
                    }
                },
            }
        )
        fc.create(train_job("tj"))
        done = wait_for(fc, TJ, "tj", _true("Complete"))
        assert [j["name"] for j in status(done)["jobsStatus"]] == ["dataset-initializer", "node"]
        no_errors(fc)


def test_the_trainjob_runs_as_a_jobset_of_its_name() -> None:
    """As Trainer does: a JobSet named after the TrainJob, owned by it, suspended with it."""
    with FakeCluster(
        releases={"trainer": "v2.3.0", "jobset": "v0.12.0"},
        tick_interval=TICK,
        controllers=[TrainJobController(run_for=60)],
    ) as fc:
        fc.create(train_job("tj", suspend=True))
        jobset = wait_for(fc, "jobsets", "tj", lambda o: True)
        assert jobset["spec"]["suspend"] is True
        [owner] = jobset["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("TrainJob", "tj", True)
        assert [r["name"] for r in jobset["spec"]["replicatedJobs"]] == ["node"]
        fc.patch(TJ, "tj", {"spec": {"suspend": False}})
        wait_for(fc, "jobsets", "tj", lambda o: o["spec"]["suspend"] is False)
        fc.delete(TJ, "tj")
        wait_until(lambda: fc.get("jobsets", "tj") is None, "the JobSet goes with its TrainJob")
        no_errors(fc)
