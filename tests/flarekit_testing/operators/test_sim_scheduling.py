"""On a FakeCluster whose nodes' labels are given (the practice cluster's are this machine's),
a pod no node can take stays Pending, as the scheduler leaves it, and its job does not
succeed: the README's TrainJob with ``node_selector={"gpu": "a100"}`` once "Succeeded" on
the practice cluster, where no node is labelled so. Without labels, any pod fits."""

from __future__ import annotations

from sim_support import TICK, cond, no_errors, train_job

from flarekit_testing import FakeCluster, TrainJobController, practice_node_labels
from wait_support import wait_until


def test_a_pod_no_node_takes_stays_pending_as_the_scheduler_leaves_it() -> None:
    with FakeCluster(node_labels=practice_node_labels()) as fc:
        body = {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "gpu-only", "namespace": "default"},
            "spec": {"nodeSelector": {"gpu": "a100"},
                     "containers": [{"name": "main", "image": "x:1"}]},
        }  # fmt: skip
        fc.create(body)
        pod = fc.get("pods", "gpu-only") or {}
        assert "nodeName" not in pod["spec"]
        scheduled = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
        assert (scheduled["status"], scheduled["reason"]) == ("False", "Unschedulable")
        assert scheduled["message"].startswith(
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
        )
        body["metadata"]["name"] = "anywhere"
        body["spec"]["nodeSelector"] = {"kubernetes.io/os": "linux"}
        fc.create(body)
        assert (fc.get("pods", "anywhere") or {})["spec"]["nodeName"] in ("node-0", "node-1")
    with FakeCluster() as fc:  # nodes of unknown labels take any pod
        body["metadata"]["name"] = "gpu-only"
        body["spec"]["nodeSelector"] = {"gpu": "a100"}
        fc.create(body)
        assert (fc.get("pods", "gpu-only") or {})["spec"]["nodeName"] in ("node-0", "node-1")


def test_a_trainjob_whose_pods_no_node_takes_never_completes() -> None:
    trainer = TrainJobController(run_for=0.05)
    with FakeCluster(
        releases={"trainer": "v2.3.0"}, tick_interval=TICK, node_labels=practice_node_labels()
    ) as fc:
        fc.add_controller(trainer)
        runtime = {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "ClusterTrainingRuntime",
            "metadata": {"name": "selective"},
            "spec": {"mlPolicy": {"numNodes": 1}, "template": {"spec": {"replicatedJobs": [{
                "name": "node",
                "template": {"spec": {"template": {"spec": {
                    "nodeSelector": {"gpu": "a100"},
                    "containers": [{"name": "node", "image": "x:1"}],
                }}}},
            }]}}},
        }  # fmt: skip
        fc.create(runtime)
        fc.create(train_job("picky", runtimeRef={"name": "selective"}))
        wait_until(lambda: fc.objects("pods", "default"), "the job's pods")
        trainer.wait_ticks(10)
        pods = fc.objects("pods", "default")
        assert len(pods) == 2
        for pod in pods:
            assert pod["status"]["phase"] == "Pending" and "nodeName" not in pod["spec"]
            assert fc.read_log("default", pod["metadata"]["name"]) == ""
        job = fc.get("trainjobs", "picky") or {}
        assert cond(job, "Complete") is None and cond(job, "Failed") is None
        no_errors(fc)
