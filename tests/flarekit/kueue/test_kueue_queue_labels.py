"""Kueue's queue label given among a job's labels is an explicit choice, for every kind of
job alike: kept as the queue, and refused (naming both) when it disagrees with `local_queue`."""

from __future__ import annotations

from typing import Any

import pytest

from flarekit.cluster import ClusterConfiguration
from flarekit.job import RayJob
from flarekit.job._trainjob import TrainJob
from flarekit.kueue import ConfigError

QUEUE = "kueue.x-k8s.io/queue-name"
PRIORITY = "kueue.x-k8s.io/priority-class"


def _config(**options: Any) -> ClusterConfiguration:
    return ClusterConfiguration(name="c", appwrapper=False, **options)


BUILDERS = {
    "TrainJob": lambda **o: TrainJob("t", image="example.com/train:1", **o),
    "RayJob": lambda **o: RayJob("r", entrypoint="python x.py", cluster_config=_config(), **o),
    "ClusterConfiguration": lambda **o: _config(**o),
}


@pytest.mark.parametrize("kind", BUILDERS)
def test_a_label_that_disagrees_with_the_option_names_both(kind: str) -> None:
    with pytest.raises(ConfigError) as info:
        BUILDERS[kind](labels={QUEUE: "from-label"}, local_queue="from-option")
    problem = next(p for p in info.value.problems if p.field == f"labels[{QUEUE!r}]")
    assert problem.value == "from-label" and "local_queue='from-option'" in problem.message


@pytest.mark.parametrize("kind", BUILDERS)
def test_a_priority_label_that_disagrees_names_both(kind: str) -> None:
    with pytest.raises(ConfigError) as info:
        BUILDERS[kind](labels={PRIORITY: "low"}, priority_class="high")
    assert f"labels[{PRIORITY!r}]" in info.value.fields


def test_the_label_alone_is_the_queue_asked_for() -> None:
    rayjob = RayJob("r", entrypoint="python x.py", cluster_config=_config(), labels={QUEUE: "q"})
    assert rayjob.requested_queue == "q"
    assert rayjob.to_dict()["metadata"]["labels"][QUEUE] == "q"
    assert _config(labels={QUEUE: "q"}).local_queue == "q"
    train = TrainJob("t", image="example.com/train:1", labels={QUEUE: "q"})
    assert train.to_dict()["metadata"]["labels"][QUEUE] == "q"


def test_the_same_value_in_both_is_fine() -> None:
    for build in BUILDERS.values():
        build(labels={QUEUE: "q"}, local_queue="q")
