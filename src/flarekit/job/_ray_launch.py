"""Running a torchrun job on a Ray cluster through the Ray Jobs API.

A Ray job's entrypoint runs once, on the head node, so ``torchrun --nnodes N`` there alone
would start nothing on other nodes. The entrypoint is therefore a small launcher (`LAUNCHER`,
sent as ``python -c``; it needs only Ray, which every Ray image has): it reserves one bundle
per node in a placement group (``STRICT_SPREAD``: N different nodes, all or nothing, which is
gang scheduling; ``SPREAD`` without gang), starts an actor in each bundle, and has every actor
run ``torchrun --nnodes N --nproc-per-node M --node-rank i --master-addr <actor 0's node>``
with the user's script or module and arguments. The same script runs unchanged here, in a
TrainJob and in a PyTorchJob. Ray Train was not chosen because its TorchTrainer sets up the
process group itself, so scripts written for torchrun would initialise it twice.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from flarekit.job._jobstate import JobState, JobStatus

if TYPE_CHECKING:
    from flarekit.ray import RayJobClient

__all__ = ["LAUNCHER", "RayRun", "node_command", "ray_entrypoint"]

LAUNCHER = r"""
import json, os, socket, subprocess, sys
import ray
from ray.util.placement_group import placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

spec = json.loads(sys.argv[1])


def node_command(spec, rank, master, port):
    target = ["-m", spec["module"]] if spec.get("module") else [spec["script"]]
    return ["torchrun", "--nnodes", str(spec["nodes"]), "--nproc-per-node", str(spec["procs"]),
            "--node-rank", str(rank), "--master-addr", master, "--master-port", str(port),
            *target, *spec["args"]]


@ray.remote
class Node:
    def address(self):
        with socket.socket() as s:
            s.bind(("", 0))
            return ray.util.get_node_ip_address(), s.getsockname()[1]

    def run(self, command):
        env = {**os.environ, **spec["env"]}
        return subprocess.run(command, env=env).returncode


ray.init()
bundle = {k: v for k, v in spec["bundle"].items() if v}
group = placement_group([dict(bundle) for _ in range(spec["nodes"])], strategy=spec["strategy"])
ray.get(group.ready())
nodes = [Node.options(num_cpus=0, scheduling_strategy=PlacementGroupSchedulingStrategy(
    placement_group=group, placement_group_bundle_index=i)).remote() for i in range(spec["nodes"])]
master, port = ray.get(nodes[0].address.remote())
codes = ray.get([n.run.remote(node_command(spec, i, master, port)) for i, n in enumerate(nodes)])
print("flarekit: node exit codes", codes, flush=True)
sys.exit(max(codes, key=abs) if any(codes) else 0)
"""


def node_command(spec: Mapping[str, Any], rank: int, master: str, port: int) -> list[str]:
    """What node `rank` runs (the launcher's own function, run here to show and test it)."""
    namespace: dict[str, Any] = {}
    source = LAUNCHER[LAUNCHER.index("def node_command") : LAUNCHER.index("@ray.remote")]
    exec(source, namespace)
    command: list[str] = namespace["node_command"](spec, rank, master, port)
    return command


def ray_entrypoint(
    *,
    nodes: int,
    procs: int,
    script: str | None,
    module: str | None,
    args: Sequence[str],
    env: Mapping[str, str],
    bundle: Mapping[str, float],
    gang: bool,
) -> tuple[str, dict[str, Any]]:
    """The entrypoint command and the spec it carries (as its one argument)."""
    spec = {
        "nodes": nodes,
        "procs": procs,
        "script": script,
        "module": module,
        "args": list(args),
        "env": dict(env),
        "bundle": dict(bundle),
        "strategy": "STRICT_SPREAD" if gang else "SPREAD",
    }
    command = f"python -c {shlex.quote(LAUNCHER)} {shlex.quote(json.dumps(spec))}"
    return command, spec


_RAY_STATES = {
    "PENDING": JobState.PENDING,
    "RUNNING": JobState.RUNNING,
    "SUCCEEDED": JobState.SUCCEEDED,
    "FAILED": JobState.FAILED,
    "STOPPED": JobState.STOPPED,
}


class RayRun:
    """A distributed job submitted to a Ray cluster: status, wait, logs, stop, delete."""

    def __init__(self, client: RayJobClient, submission_id: str, name: str) -> None:
        self.ray = client
        self.submission_id = submission_id
        self.name = name

    def status(self) -> JobStatus:
        details = self.ray.get(self.submission_id)
        return JobStatus(
            kind="RayJobSubmission",
            name=self.submission_id,
            namespace=self.ray.address,
            state=_RAY_STATES.get(details.status.value, JobState.PENDING),
            reason=str(getattr(details, "error_type", None) or ""),
            message=str(details.message or ""),
        )

    def wait(self, timeout: float = 600.0, *, poll: float = 0.5) -> JobStatus:
        """Until the Ray job ends; a failed or stopped job raises `TerminalFailure`."""
        from flarekit._wait import TerminalFailure

        self.ray.wait(self.submission_id, timeout=timeout, poll=poll)
        final = self.status()
        if final.state is not JobState.SUCCEEDED:
            raise TerminalFailure(
                what=f"Ray job {self.submission_id}",
                reason=final.message or final.state.value,
                last_state=final.state.value,
            )
        return final

    def logs(self, *, follow: bool = False) -> str | Iterator[str]:
        if follow:
            return self.ray.follow_logs(self.submission_id)
        return self.ray.logs(self.submission_id)

    def stop(self) -> bool:
        return self.ray.stop(self.submission_id)

    def delete(self) -> bool:
        return self.ray.delete(self.submission_id)

    def __repr__(self) -> str:
        return f"RayRun({self.submission_id!r} on {self.ray.address})"
