"""The README's main job, ``python -m flarekit.walkthrough``: every step, exit 0, nothing left.

It runs in-process against a FakeCluster standing in for a user's cluster through a
kubeconfig, where the test itself checks that nothing was left behind, also after a failure.
As a new user runs it (a fresh process, no kubeconfig anywhere: the practice cluster, whose
pods run here), it runs in tests/flarekit_testing/local/local_inner.py, in a network
namespace of its own, twice, with two seeds.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from flarekit.walkthrough import main
from flarekit.walkthrough.backends import leftovers
from flarekit_testing import (
    AppWrapperController,
    FakeCluster,
    KueueController,
    RayClusterController,
    RayJobController,
    TrainJobController,
)

STEPS = [
    "1. Connect to a cluster",
    "2. Set up Kueue queues, as a platform admin would",
    "3. Create a Ray cluster",
    "4. Wait for the Ray cluster to be ready",
    "5. Look at the cluster's details",
    "6. Run a Ray job on the cluster",
    "7. Submit a training job to the queue",
    "8. Watch the training job finish and read its logs",
    "9. Tear everything down",
]
_names = itertools.count()


def _cluster(**trainjob: object) -> FakeCluster:
    return FakeCluster(
        tick_interval=0.02,
        controllers=[
            KueueController(),
            RayClusterController(ready_after=0.05),
            RayJobController(run_for=0.1, wait_for_cluster=True),
            TrainJobController(run_for=0.1, **trainjob),  # type: ignore[arg-type]
            AppWrapperController(),
        ],
    )


@pytest.fixture
def users_cluster() -> Iterator[FakeCluster]:
    with _cluster() as fc:
        yield fc


def _namespace(fc: FakeCluster) -> str:
    name = f"team{next(_names)}"
    fc.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


def _settled(fc: FakeCluster, expected: list[str] | None = None) -> list[str]:
    """What is left once the simulated operators have removed pods and Workloads."""
    deadline = time.monotonic() + 10
    while leftovers(fc) != (expected or []) and time.monotonic() < deadline:
        time.sleep(0.05)
    return leftovers(fc)


def test_on_a_users_cluster_with_queue_setup(
    users_cluster: FakeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    ns = _namespace(users_cluster)
    code = main(["--kubeconfig", str(users_cluster.kubeconfig_path), "--namespace", ns,
                 "--setup-queues", "--local-queue", "ml", "--image", "example.com/train:1",
                 "--poll", "0.05"])  # fmt: skip
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    for step in STEPS:
        assert step in out.out
    assert f"LocalQueue {ns}/ml" in out.out
    assert "practice" not in out.out.split("2. ")[1]  # no practice cluster was started
    assert _settled(users_cluster) == []


def test_on_a_users_cluster_with_its_own_queue(
    users_cluster: FakeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    ns = _namespace(users_cluster)
    api = "kueue.x-k8s.io/" + users_cluster.resource("clusterqueues").storage_version
    admin = [
        {"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": "nodes"}},
        {
            "apiVersion": api,
            "kind": "ClusterQueue",
            "metadata": {"name": "shared"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory"],
                        "flavors": [
                            {
                                "name": "nodes",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": "100"},
                                    {"name": "memory", "nominalQuota": "1Ti"},
                                ],
                            }
                        ],
                    }
                ],
            },
        },
        {
            "apiVersion": api,
            "kind": "LocalQueue",
            "metadata": {"name": "default", "namespace": ns},
            "spec": {"clusterQueue": "shared"},
        },
    ]
    for obj in admin:
        users_cluster.create(obj)
    from flarekit.walkthrough._runtime import torch_distributed_runtime

    users_cluster.create(torch_distributed_runtime())
    before = leftovers(users_cluster)
    code = main(["--kubeconfig", str(users_cluster.kubeconfig_path), "--namespace", ns,
                 "--poll", "0.05"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "Skipped: on a real cluster your admin has set up the queues already" in out
    assert "default (default)" in out  # the queue listing
    assert _settled(users_cluster, before) == before  # the admin's objects stay, ours are gone


def test_a_failed_step_still_tears_down(capsys: pytest.CaptureFixture[str]) -> None:
    with _cluster(fail=True, failure_message="CUDA out of memory") as fc:
        ns = _namespace(fc)
        code = main(["--kubeconfig", str(fc.kubeconfig_path), "--namespace", ns,
                     "--setup-queues", "--poll", "0.05"])  # fmt: skip
        captured = capsys.readouterr()
        assert code == 1
        assert captured.err.startswith("error: ") and len(captured.err.splitlines()) == 1
        assert "CUDA out of memory" in captured.err
        assert "9. Tear everything down" in captured.out
        assert _settled(fc) == []


def test_an_existing_cluster_of_the_same_name_is_not_taken_over(
    users_cluster: FakeCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    ns = _namespace(users_cluster)
    mine = {"apiVersion": "ray.io/v1", "kind": "RayCluster",
            "metadata": {"name": "walkthrough-ray", "namespace": ns},
            "spec": {"headGroupSpec": {"template": {"spec": {"containers": [
                {"name": "ray-head", "image": "rayproject/ray:2.47.1"}]}}}}}  # fmt: skip
    users_cluster.create(mine)
    code = main(["--kubeconfig", str(users_cluster.kubeconfig_path), "--namespace", ns,
                 "--setup-queues", "--poll", "0.05"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    assert "already exists" in err and "--prefix" in err
    assert users_cluster.get("rayclusters", "walkthrough-ray", ns) is not None
    made = ("LocalQueue", "ClusterQueue", "ResourceFlavor", "ClusterTrainingRuntime", "TrainJob")
    assert [item for item in leftovers(users_cluster) if item.startswith(made)] == []


def test_real_stack_not_built_says_how_to_build_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FLAREKIT_CACHE_DIR", str(tmp_path))  # an empty cache: nothing built
    for env in ("FLAREKIT_CONTROLPLANE_ASSETS", "KUBEBUILDER_ASSETS", "FLAREKIT_KUBECONFIG"):
        monkeypatch.delenv(env, raising=False)
    code = main(["--real-stack"])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.err.startswith("error: the real stack cannot start: ")
    assert "make control-plane" in captured.err and len(captured.err.splitlines()) == 1
    assert "KWOK" in captured.out  # it said what the real stack is before trying


def test_real_stack_and_a_kubeconfig_exclude_each_other(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--real-stack", "--kubeconfig", "cluster.yaml"])
    assert stopped.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_footprint_names_what_is_new_in_its_namespace_and_cluster_wide(
    users_cluster: FakeCluster,
) -> None:
    from flarekit import Client, from_kubeconfig
    from flarekit.walkthrough._footprint import Footprint

    ns, other = _namespace(users_cluster), _namespace(users_cluster)
    users_cluster.create({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "before", "namespace": ns}})  # fmt: skip
    with Client(from_kubeconfig(users_cluster.kubeconfig_path), namespace=ns) as client:
        footprint = Footprint(client, ns)
        assert footprint.added() == []
        for name, where in (("mine", ns), ("elsewhere", other)):
            users_cluster.create({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": name, "namespace": where}})  # fmt: skip
        api = "kueue.x-k8s.io/" + users_cluster.resource("resourceflavors").storage_version
        users_cluster.create({"apiVersion": api, "kind": "ResourceFlavor",
                              "metadata": {"name": "urgent"}})  # fmt: skip
        users_cluster.create({"apiVersion": "v1", "kind": "Event",
                              "metadata": {"name": "e", "namespace": ns},
                              "involvedObject": {"kind": "ConfigMap", "name": "mine",
                                                 "namespace": ns}})  # fmt: skip
        # Only this namespace and cluster-scoped objects count; events are the cluster's.
        assert footprint.added() == [f"ConfigMap {ns}/mine", "ResourceFlavor urgent"]
        users_cluster.delete("configmaps", "mine", ns)
        users_cluster.delete("resourceflavors", "urgent")
        assert footprint.settled(timeout=5, poll=0.05) == []
