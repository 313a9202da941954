"""DistributedJob ships packages and local files in its command on Kubernetes targets (the
bootstrap of `flarekit.job._shipping`, run for real in test_trainjob_local.py), and says
plainly that it does not on a running Ray cluster."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from flarekit import ConfigError
from flarekit.job import DistributedJob


def test_the_command_installs_and_writes_before_torchrun(tmp_path: Path) -> None:
    helper = tmp_path / "helpers.py"
    helper.write_text("ANSWER = 42\n")
    job = DistributedJob(
        "d", script="train.py", args=["--epochs", "2"], image="example.com/t:1", j="2x1",
        packages_to_install=["tqdm>=4"], files=[helper],
    )  # fmt: skip
    trainer = job.to_trainjob().to_dict()["spec"]["trainer"]
    container = job.to_pytorchjob()["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"][
        "containers"
    ][0]
    for command in (trainer["command"], container["command"]):
        assert command[:2] == ["python", "-c"]
        spec = json.loads(command[3])
        assert spec["packages"] == ["tqdm>=4"]
        assert base64.b64decode(spec["files"]["helpers.py"]) == b"ANSWER = 42\n"
        assert command[4:] == ["torchrun", "train.py", "--epochs", "2"]


def test_a_shipped_script_runs_from_where_it_is_written(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("print('hi')\n")
    job = DistributedJob(
        "d", script="train.py", args=["7"], image="example.com/t:1", files=[script]
    )
    command = job.to_trainjob().to_dict()["spec"]["trainer"]["command"]
    # Written into the bootstrap's folder on PYTHONPATH, not the working directory (the real
    # node showed torchrun failing to open it there): run as a module.
    assert command[4:] == ["torchrun", "-m", "train", "7"]


def test_without_anything_to_ship_the_command_is_torchrun() -> None:
    job = DistributedJob("d", script="train.py", image="example.com/t:1")
    assert job.to_trainjob().to_dict()["spec"]["trainer"]["command"] == ["torchrun", "train.py"]


def test_shipping_to_a_running_ray_cluster_is_refused() -> None:
    job = DistributedJob("d", script="train.py", packages_to_install=["tqdm"])
    with pytest.raises(ConfigError, match=r"packages_to_install.*not shipped to a running Ray"):
        job.submit("http://127.0.0.1:9")


def test_working_dir_is_checked_when_the_job_is_defined(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print('hi')\n")
    job = DistributedJob("d", script="train.py", working_dir=tmp_path)
    assert job.working_dir == str(tmp_path.resolve())
    with pytest.raises(ConfigError) as missing:
        DistributedJob("d", script="train.py", working_dir=tmp_path / "nowhere")
    assert missing.value.fields == ["working_dir"] and "no such folder" in str(missing.value)
    with pytest.raises(ConfigError) as elsewhere:
        DistributedJob("d", script="other.py", working_dir=tmp_path)
    assert elsewhere.value.fields == ["script"]
    assert "not found in working_dir" in str(elsewhere.value)
    # an absolute script is a path on the cluster, not looked for locally
    assert DistributedJob("d", script="/opt/train.py", working_dir=tmp_path).working_dir


def test_working_dir_is_refused_on_kubernetes_targets(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print('hi')\n")
    job = DistributedJob("d", script="train.py", image="example.com/t:1", working_dir=tmp_path)
    for build in (job.to_trainjob, job.to_pytorchjob):
        with pytest.raises(ConfigError) as refused:
            build()
        assert refused.value.fields == ["working_dir"]
        assert "files=[...]" in str(refused.value)
