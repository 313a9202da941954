"""flarekit.job.ray_launcher, the program a torchrun job on a Ray cluster runs: its commands,
its exit code, and `main` end to end with a stand-in for Ray that runs each node's command
here (a `torchrun` on PATH that records its arguments), so no Ray cluster is needed."""

from __future__ import annotations

import json
import os
import stat
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flarekit.job import ray_launcher
from flarekit.job._ray_launch import launcher_source, ray_entrypoint


def _spec(**overrides: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "nodes": 2, "procs": 4, "script": "train.py", "module": None, "args": ["--lr", "0.1"],
        "env": {"SEED": "7"}, "bundle": {"CPU": 4.0, "GPU": 0.0}, "strategy": "STRICT_SPREAD",
    }  # fmt: skip
    spec.update(overrides)
    return spec


def test_node_command_runs_torchrun_for_one_rank() -> None:
    assert ray_launcher.node_command(_spec(), 1, "10.0.0.5", 29500) == [
        "torchrun", "--nnodes", "2", "--nproc-per-node", "4", "--node-rank", "1",
        "--master-addr", "10.0.0.5", "--master-port", "29500", "train.py", "--lr", "0.1",
    ]  # fmt: skip
    module = ray_launcher.node_command(_spec(module="pkg.train", script=None), 0, "h", 1)
    assert module[-4:] == ["-m", "pkg.train", "--lr", "0.1"]


@pytest.mark.parametrize(
    ("codes", "expected"), [([0, 0], 0), ([0, 3], 3), ([-9, 1], -9), ([2, -1], 2)]
)
def test_exit_code_is_the_worst_node(codes: list[int], expected: int) -> None:
    assert ray_launcher.exit_code(codes) == expected


def test_the_entrypoint_carries_the_module_source_and_spec() -> None:
    command, spec = ray_entrypoint(
        nodes=2, procs=1, script="t.py", module=None, args=[], env={}, bundle={"CPU": 1.0},
        gang=False,
    )  # fmt: skip
    assert spec["strategy"] == "SPREAD"
    assert launcher_source() == Path(ray_launcher.__file__).read_text("utf-8")
    assert json.dumps(spec) in command


class _FakeRay(types.ModuleType):
    """Enough of Ray for `main`: actors are plain objects, remote calls run at once."""

    def __init__(self) -> None:
        super().__init__("ray")
        self.bundles: list[dict[str, float]] = []
        self.strategy = ""
        self.util = types.SimpleNamespace(get_node_ip_address=lambda: "127.0.0.1")

    def init(self) -> None:
        pass

    @staticmethod
    def get(value: Any, timeout: float | None = None) -> Any:
        return value

    def remote(self, cls: type) -> Any:
        class Handle:
            def options(self, **_: Any) -> Any:
                return self

            def remote(self) -> Any:
                instance = cls()
                methods = {name: getattr(instance, name) for name in ("address", "run")}
                return types.SimpleNamespace(
                    **{name: types.SimpleNamespace(remote=m) for name, m in methods.items()}
                )

        return Handle()


@pytest.fixture
def fake_ray(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[_FakeRay]:
    fake = _FakeRay()

    def placement_group(bundles: list[dict[str, float]], strategy: str) -> Any:
        fake.bundles, fake.strategy = bundles, strategy
        return types.SimpleNamespace(ready=lambda: None)

    strategies = types.ModuleType("ray.util.scheduling_strategies")
    strategies.PlacementGroupSchedulingStrategy = lambda **kw: kw  # type: ignore[attr-defined]
    groups = types.ModuleType("ray.util.placement_group")
    groups.placement_group = placement_group  # type: ignore[attr-defined]
    exceptions = types.ModuleType("ray.exceptions")
    exceptions.GetTimeoutError = TimeoutError  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ray.exceptions", exceptions)
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "ray.util.placement_group", groups)
    monkeypatch.setitem(sys.modules, "ray.util.scheduling_strategies", strategies)
    # A torchrun that records its arguments and environment, and fails on rank 1 if told to.
    record = tmp_path / "calls.jsonl"
    torchrun = tmp_path / "torchrun"
    torchrun.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        f"open({str(record)!r}, 'a').write(json.dumps([sys.argv[1:], os.environ.get('SEED')]) + '\\n')\n"
        "rank = sys.argv[sys.argv.index('--node-rank') + 1]\n"
        "sys.exit(int(os.environ.get('FAIL_RANK_' + rank, '0')))\n"
    )
    torchrun.chmod(torchrun.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    fake.record = record  # type: ignore[attr-defined]
    yield fake


def test_main_runs_one_torchrun_per_node(
    fake_ray: _FakeRay, capsys: pytest.CaptureFixture[str]
) -> None:
    code = ray_launcher.main(["launcher", json.dumps(_spec())])
    assert code == 0
    assert fake_ray.strategy == "STRICT_SPREAD"
    assert fake_ray.bundles == [{"CPU": 4.0}, {"CPU": 4.0}]  # zero amounts are left out
    calls = [json.loads(line) for line in fake_ray.record.read_text().splitlines()]  # type: ignore[attr-defined]
    ranks = sorted(args[args.index("--node-rank") + 1] for args, _ in calls)
    assert ranks == ["0", "1"]
    assert all(seed == "7" for _, seed in calls)  # the job's env reaches every node
    assert "node exit codes [0, 0]" in capsys.readouterr().out


def test_main_fails_with_a_failing_node(
    fake_ray: _FakeRay, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIL_RANK_1", "5")
    assert ray_launcher.main(["launcher", json.dumps(_spec())]) == 5
