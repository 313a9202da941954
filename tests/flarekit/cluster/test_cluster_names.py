"""CodeFlare SDK's old parameter names and typos get the name to use, not a bare TypeError."""

from __future__ import annotations

from typing import Any

import pytest

from flarekit.cluster import ClusterConfiguration, ConfigError, WorkerGroup


def test_codeflare_names_and_typos_name_the_parameter_to_use() -> None:
    wrong: dict[str, Any] = {"head_cpus": 2, "min_memory": 4, "num_gpus": 1, "num_worker": 3}
    with pytest.raises(ConfigError) as caught:
        ClusterConfiguration(name="x", **wrong)
    assert isinstance(caught.value, TypeError)  # what a dataclass raised before, still caught
    expected = {p.field: p.expected for p in caught.value.problems}
    assert expected["head_cpus"] == "head_cpu_requests and head_cpu_limits"
    assert expected["min_memory"] == "worker_memory_requests"
    assert expected["num_gpus"] == "worker_extended_resource_requests={'nvidia.com/gpu': N}"
    assert expected["num_worker"].startswith("num_workers")


def test_a_worker_group_typo_names_the_close_parameters() -> None:
    wrong: dict[str, Any] = {"cpu_request": 2}
    with pytest.raises(ConfigError) as caught:
        WorkerGroup("g", **wrong)
    (problem,) = caught.value.problems
    assert problem.message == "not a WorkerGroup parameter"
    assert problem.expected.startswith("cpu_requests")


def test_positional_and_known_keywords_still_work() -> None:
    assert ClusterConfiguration("x", num_workers=2).num_workers == 2
    assert WorkerGroup("g", num_workers=3).num_workers == 3
