"""Run the README's Python examples as a user would, against whatever flarekit is importable.

``python tests/readme_examples.py README.md [model|facade|fakecluster ...]`` runs the chosen
examples (all by default) and prints one line per example; any failure exits non-zero with
its traceback. The packaging tests run it with the interpreter of a fresh virtual
environment (a wheel installed, no repository on the path); ``tests/test_readme.py`` runs the
same functions in the development environment.

The model example is self-contained. The facade example talks to "the cluster of your
kubeconfig": here a FakeCluster serving the default pinned releases (plus Ingress, which real
clusters have built in) with simulated KubeRay, Kueue and Trainer operators, prepared the way
a platform admin prepares a real one (namespace ``team-a``, a LocalQueue ``team-a-queue`` with
quota, the ``torch-distributed`` training runtime, an Ingress for the dashboard), with
``KUBECONFIG`` pointing at it. The FakeCluster example defines tests, which
are called.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: Which README block is which: a marker only that block contains.
MARKERS = {
    "model": "cluster.spec.worker_group_specs[0].replicas = 4",
    "facade": "ClusterConfiguration(",
    "fakecluster": "FakeCluster(",
}


def python_blocks(readme: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", readme.read_text(encoding="utf-8"), re.DOTALL)


def block(readme: Path, name: str) -> str:
    """The one README block holding ``MARKERS[name]`` (an error if there is not exactly one)."""
    found = [b for b in python_blocks(readme) if MARKERS[name] in b]
    if len(found) != 1:
        raise AssertionError(f"{readme}: {len(found)} python blocks contain {MARKERS[name]!r}")
    return found[0]


def run_block(readme: Path, code: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(code, str(readme), "exec"), namespace)
    return namespace


def run_model(readme: Path) -> str:
    names = run_block(readme, block(readme, "model"))
    dumped = names["cluster"].to_dict()
    assert dumped["spec"]["workerGroupSpecs"][0]["replicas"] == 4, dumped
    return f"model: {type(names['cluster']).__module__}.{type(names['cluster']).__name__}"


def run_fakecluster(readme: Path) -> str:
    names = run_block(readme, block(readme, "fakecluster"))
    tests = [v for k, v in names.items() if k.startswith("test_") and callable(v)]
    assert tests, "the FakeCluster example defines no test"
    for test in tests:
        test()
    return f"fakecluster: {len(tests)} test(s) passed"


def run_facade(readme: Path) -> str:
    with practice_cluster() as fake:
        started = time.monotonic()
        run_block(readme, block(readme, "facade"))
        clusters = [obj["metadata"]["name"] for obj in fake.objects("rayclusters.ray.io")]
        assert clusters == [], f"cluster.down() left {clusters} behind"
        jobs = [obj["metadata"]["name"] for obj in fake.objects("trainjobs.trainer.kubeflow.org")]
        assert jobs == ["fine-tune"], jobs
        return f"facade: ran in {time.monotonic() - started:.1f}s on a FakeCluster"


@contextmanager
def practice_cluster() -> Iterator[Any]:
    """A FakeCluster prepared for the facade example, set as the kubeconfig's cluster."""
    from flarekit import (
        Client,
        ClusterQueueSpec,
        LocalQueueSpec,
        ResourceFlavorSpec,
        apply_all,
        from_kubeconfig,
    )
    from flarekit.testing import (
        FakeCluster,
        KueueController,
        RayClusterController,
        TrainJobController,
    )
    from flarekit_models._crds import crds_for, default_releases

    fake = FakeCluster(
        crds=crds_for(default_releases()),
        tick_interval=0.02,
        controllers=[
            KueueController(admit_after=0.1),
            RayClusterController(ready_after=0.2),
            TrainJobController(run_for=0.3, logs=lambda job, pod: ["epoch 1: loss 0.42"]),
        ],
    ).start()
    saved = os.environ.get("KUBECONFIG")
    try:
        fake.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
        client = Client(from_kubeconfig(fake.kubeconfig_path), namespace="team-a")
        quota = {"cpu": 64, "memory": "256Gi", "nvidia.com/gpu": 8}
        apply_all(
            client,
            [
                ResourceFlavorSpec("default-flavor", node_labels={}),
                ClusterQueueSpec("team-a-cq", flavors={"default-flavor": quota}),
                LocalQueueSpec("team-a-queue", "team-a", "team-a-cq"),
            ],
        )
        fake.create(_runtime())
        fake.create(_dashboard_ingress())
        os.environ["KUBECONFIG"] = str(fake.kubeconfig_path)
        yield fake
    finally:
        if saved is None:
            os.environ.pop("KUBECONFIG", None)
        else:
            os.environ["KUBECONFIG"] = saved
        fake.stop()


def _runtime() -> dict[str, Any]:
    """A ``torch-distributed`` ClusterTrainingRuntime, as Kubeflow Trainer's install has."""
    node = {"name": "node", "image": "pytorch/pytorch:2.7.1", "command": ["torchrun"]}
    job = {
        "name": "node",
        "template": {
            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
            "spec": {"template": {"spec": {"containers": [node]}}},
        },
    }
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "torch-distributed"},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}},
            "template": {"spec": {"replicatedJobs": [job]}},
        },
    }


def _dashboard_ingress() -> dict[str, Any]:
    """An Ingress to the demo cluster's head Service, as a platform would expose it."""
    backend = {"service": {"name": "demo-head-svc", "port": {"number": 8265}}}
    path = {"path": "/", "pathType": "Prefix", "backend": backend}
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "demo-dashboard", "namespace": "team-a"},
        "spec": {"rules": [{"host": "demo.example.com", "http": {"paths": [path]}}]},
    }


RUNNERS: dict[str, Callable[[Path], str]] = {
    "model": run_model,
    "facade": run_facade,
    "fakecluster": run_fakecluster,
}


def main(argv: list[str]) -> int:
    readme = Path(argv[0])
    for name in argv[1:] or list(RUNNERS):
        print(RUNNERS[name](readme), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
