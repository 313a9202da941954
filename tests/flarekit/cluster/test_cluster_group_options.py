"""Per-worker-group environment variables and pod labels."""

from __future__ import annotations

import pytest

from flarekit.cluster import (
    ClusterConfiguration,
    ConfigError,
    WorkerGroup,
    from_raycluster,
    to_dict,
)


def _config() -> ClusterConfiguration:
    gpus = WorkerGroup("gpus", envs={"MODE": "gpu", "EXTRA": "1"}, labels={"pool": "a100"})
    return ClusterConfiguration(name="demo", envs={"MODE": "cpu", "TEAM": "a"},
                                worker_groups=[gpus])  # fmt: skip


def test_a_groups_envs_win_over_the_clusters_and_its_labels_go_on_its_pods() -> None:
    spec = to_dict(_config())["spec"]
    main, gpus = spec["workerGroupSpecs"]
    env = {e["name"]: e["value"] for e in gpus["template"]["spec"]["containers"][0]["env"]}
    assert env == {"MODE": "gpu", "TEAM": "a", "EXTRA": "1"}
    assert gpus["template"]["metadata"]["labels"] == {"pool": "a100"}
    main_env = {e["name"]: e["value"] for e in main["template"]["spec"]["containers"][0]["env"]}
    assert main_env == {"MODE": "cpu", "TEAM": "a"}
    assert (
        "metadata" not in main["template"] and "metadata" not in spec["headGroupSpec"]["template"]
    )


def test_group_options_read_back_from_the_raycluster() -> None:
    config = _config()
    assert from_raycluster(to_dict(config)) == config


def test_bad_group_envs_and_labels_name_their_field() -> None:
    with pytest.raises(ConfigError) as caught:
        ClusterConfiguration(name="demo", worker_groups=[
            WorkerGroup("g", envs={"A=B": "x", "N": 3}, labels={"bad key!": "v"})  # type: ignore[dict-item]
        ])  # fmt: skip
    fields = {p.field for p in caught.value.problems}
    assert "worker_groups[0].envs['A=B']" in fields
    assert "worker_groups[0].envs['N']" in fields
    assert any(f.startswith("worker_groups[0].labels") for f in fields), fields
