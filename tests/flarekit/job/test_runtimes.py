"""Runtime summaries read from the typed runtime objects, older Trainer releases included."""

from __future__ import annotations

from flarekit.job._runtimes import runtime_of
from flarekit_models.trainer.v1alpha1 import ClusterTrainingRuntime, TrainingRuntime


def test_a_trainer_2_0_torch_runtime_reads_its_processes_per_node_and_elastic_policy() -> None:
    # Trainer 2.0 wrote numProcPerNode and elasticPolicy under mlPolicy.torch; the model of a
    # later release keeps them as unknown fields, and the summary still reads them.
    runtime = ClusterTrainingRuntime.model_validate(
        {
            "metadata": {"name": "torch-distributed", "labels": {"trainer.kubeflow.org/framework": "torch"}},
            "spec": {
                "mlPolicy": {"numNodes": 2, "torch": {"numProcPerNode": "auto", "elasticPolicy": {"maxNodes": 3}}},
                "podGroupPolicy": {"coscheduling": {}},
                "template": {"spec": {"replicatedJobs": [
                    {"name": "launcher", "template": {"spec": {"template": {"spec": {"containers": [{"name": "l"}]}}}}},
                    {
                        "name": "trainer",
                        "template": {
                            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                            "spec": {"template": {"spec": {"containers": [
                                {"name": "sidecar"}, {"name": "node", "image": "pytorch:2"},
                            ]}}},
                        },
                    },
                ]}},
            },
        }
    )  # fmt: skip
    summary = runtime_of(runtime)
    assert (summary.kind, summary.framework, summary.policy) == (
        "ClusterTrainingRuntime",
        "torch",
        "torch",
    )
    assert (summary.num_nodes, summary.num_proc_per_node, summary.gang) == (
        2,
        "auto",
        "coscheduling",
    )
    assert (summary.trainer_job, summary.trainer_container, summary.image) == (
        "trainer",
        "node",
        "pytorch:2",
    )
    assert summary.containers == {"launcher": ("l",), "trainer": ("sidecar", "node")}
    assert summary.details == {"elasticPolicy": {"maxNodes": 3}}


def test_an_mpi_training_runtime_reads_its_mpi_details() -> None:
    runtime = TrainingRuntime.model_validate(
        {
            "metadata": {"name": "mpi", "namespace": "team-a"},
            "spec": {"mlPolicy": {"mpi": {"numProcPerNode": 4, "mpiImplementation": "OpenMPI"}}},
        }
    )
    summary = runtime_of(runtime)
    assert (summary.kind, summary.namespace, summary.policy) == ("TrainingRuntime", "team-a", "mpi")
    assert summary.num_proc_per_node == 4
    assert summary.details == {"mpiImplementation": "OpenMPI"}
    assert (summary.trainer_job, summary.image, summary.gang) == ("node", None, None)
