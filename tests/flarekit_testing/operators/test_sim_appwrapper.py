"""AppWrapperController: phases, components, suspension and deletion."""

from __future__ import annotations

from typing import Any

from sim_support import TICK, app_wrapper, cond, no_errors, status, train_job, validate, wait_for

from flarekit_testing import (
    AppWrapperController,
    Event,
    FakeCluster,
    ManualClock,
    TrainJobController,
)
from wait_support import wait_until

AW = "appwrappers"
RELEASES = {"appwrapper": "v1.2.1", "kuberay": "v1.7.0"}


class Phases:
    """Records the phases an AppWrapper goes through."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def on_event(self, cluster: FakeCluster, event: Event) -> None:
        if event.key[1] == AW and event.type != "DELETED":
            phase = (event.obj.get("status") or {}).get("phase")
            if phase and (not self.seen or self.seen[-1] != phase):
                self.seen.append(phase)

    def on_tick(self, cluster: FakeCluster) -> None:
        pass


def test_runs_its_components_then_succeeds() -> None:
    clock = ManualClock()
    phases = Phases()
    with FakeCluster(
        releases=RELEASES,
        tick_interval=TICK,
        controllers=[phases, AppWrapperController(succeed_after=10, clock=clock)],
    ) as fc:
        fc.create(app_wrapper("aw"))
        obj = wait_for(fc, AW, "aw", lambda o: (cond(o, "PodsReady") or {}).get("status") == "True")
        assert status(obj)["phase"] == "Running"
        assert obj["metadata"]["finalizers"] == ["workload.codeflare.dev/finalizer"]
        (component,) = status(obj)["componentStatus"]
        assert (component["kind"], component["name"]) == ("RayCluster", "aw-ray")
        assert [p["replicas"] for p in component["podSets"]] == [1, 2]
        child = fc.get("rayclusters", "aw-ray")
        assert child is not None
        assert child["metadata"]["labels"]["workload.codeflare.dev/appwrapper"] == "aw"
        assert child["metadata"]["ownerReferences"][0]["kind"] == "AppWrapper"
        validate(obj)
        clock.advance(10)
        done = wait_for(fc, AW, "aw", lambda o: status(o).get("phase") == "Succeeded")
        # the recorder sees events on the controller thread, a moment after the store
        wait_until(lambda: phases.seen[-1:] == ["Succeeded"], "the recorder sees Succeeded")
        assert phases.seen == ["Suspended", "Resuming", "Running", "Succeeded"]
        validate(done)
        no_errors(fc)


def test_suspend_removes_components_and_resume_restores_them() -> None:
    with FakeCluster(
        releases=RELEASES, tick_interval=TICK, controllers=[AppWrapperController()]
    ) as fc:
        fc.create(app_wrapper("aw"))
        wait_for(fc, AW, "aw", lambda o: status(o).get("phase") == "Running")
        fc.patch(AW, "aw", {"spec": {"suspend": True}})
        obj = wait_for(fc, AW, "aw", lambda o: status(o).get("phase") == "Suspended")
        assert fc.get("rayclusters", "aw-ray") is None
        deployed = cond(obj, "ResourcesDeployed")
        assert deployed and deployed["status"] == "False"
        validate(obj)
        fc.patch(AW, "aw", {"spec": {"suspend": False}})
        wait_for(fc, AW, "aw", lambda o: status(o).get("phase") == "Running")
        assert fc.get("rayclusters", "aw-ray") is not None
        no_errors(fc)


def test_failure() -> None:
    with FakeCluster(
        releases=RELEASES, tick_interval=TICK, controllers=[AppWrapperController(fail_after=0)]
    ) as fc:
        fc.create(app_wrapper("aw"))
        obj = wait_for(fc, AW, "aw", lambda o: status(o).get("phase") == "Failed")
        unhealthy = cond(obj, "Unhealthy")
        assert unhealthy and unhealthy["status"] == "True"
        validate(obj)
        no_errors(fc)


def test_deletion_removes_components_before_the_finalizer() -> None:
    with FakeCluster(
        releases=RELEASES, tick_interval=TICK, controllers=[AppWrapperController()]
    ) as fc:
        fc.create(app_wrapper("aw"))
        wait_for(fc, AW, "aw", lambda o: status(o).get("phase") == "Running")
        fc.delete(AW, "aw")
        wait_until(lambda: fc.get(AW, "aw") is None, "the AppWrapper is gone")
        assert fc.get("rayclusters", "aw-ray") is None
        no_errors(fc)


def test_suspended_app_wrapper_stays_suspended() -> None:
    controller = AppWrapperController()
    with FakeCluster(releases=RELEASES, tick_interval=TICK, controllers=[controller]) as fc:
        fc.create(app_wrapper("aw", suspend=True))
        wait_for(fc, AW, "aw", lambda o: status(o).get("phase") == "Suspended")
        controller.wait_ticks(3)
        assert status(fc.get(AW, "aw") or {})["phase"] == "Suspended"
        assert fc.get("rayclusters", "aw-ray") is None
        no_errors(fc)


def test_ends_as_its_wrapped_job_ends() -> None:
    """Its components' end ends it (the real controller counts their pods): Succeeded when
    the wrapped job succeeds, Failed when it fails."""
    releases = {"appwrapper": "v1.2.1", "trainer": "v2.3.0"}
    jobs = TrainJobController(run_for=0.2, fail_when=lambda o: o["metadata"]["name"] == "bad-tj")
    with FakeCluster(
        releases=releases, tick_interval=TICK, controllers=[AppWrapperController(), jobs]
    ) as fc:
        for name in ("good", "bad"):
            wrapper = app_wrapper(name)
            wrapper["spec"]["components"] = [{"template": train_job(f"{name}-tj")}]
            fc.create(wrapper)
        good = wait_for(fc, AW, "good", lambda o: status(o).get("phase") == "Succeeded")
        wait_for(fc, AW, "bad", lambda o: status(o).get("phase") == "Failed")
        validate(good)
        no_errors(fc)
