"""The entrypoint of a torchrun job on a Ray cluster: one torchrun per node, placed by Ray.

A Ray job's entrypoint runs once, on the head node. This program reserves one bundle per
node in a placement group (``STRICT_SPREAD``: N different nodes, all or nothing, which is
gang scheduling; ``SPREAD`` without gang), starts an actor in each bundle, and has every
actor run ``torchrun --nnodes N --node-rank i --master-addr <actor 0's node>`` with the
user's script or module and arguments.

It is sent to the cluster as its source (``python -c``: flarekit need not be installed
there) with its spec, JSON, as the one argument, and needs only Ray, which every Ray image
has. Ray (and what only the launcher uses) is imported inside `main`, so the rest is importable
and tested anywhere, cheaply.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any


def node_command(spec: Mapping[str, Any], rank: int, master: str, port: int) -> list[str]:
    """What node `rank` runs: torchrun with the user's script or module."""
    target = ["-m", spec["module"]] if spec.get("module") else [spec["script"]]
    return [
        "torchrun",
        "--nnodes", str(spec["nodes"]),
        "--nproc-per-node", str(spec["procs"]),
        "--node-rank", str(rank),
        "--master-addr", master,
        "--master-port", str(port),
        *target,
        *spec["args"],
    ]  # fmt: skip


def exit_code(codes: Sequence[int]) -> int:
    """The job's exit code: the first non-zero node code by magnitude, else 0."""
    return max(codes, key=abs) if any(codes) else 0


def main(argv: Sequence[str]) -> int:
    # Imported here, not at the top: flarekit imports this module for `node_command`, and
    # importing the facade should not pay for what only the launcher itself uses.
    import importlib
    import json
    import os
    import socket
    import subprocess

    ray: Any = importlib.import_module("ray")
    placement_group: Any = importlib.import_module("ray.util.placement_group").placement_group
    strategies: Any = importlib.import_module("ray.util.scheduling_strategies")

    spec = json.loads(argv[1])

    class Node:
        def address(self) -> tuple[str, int]:
            with socket.socket() as s:
                s.bind(("", 0))
                return ray.util.get_node_ip_address(), s.getsockname()[1]

        def run(self, command: list[str]) -> int:
            env = {**os.environ, **spec["env"]}
            return subprocess.run(command, env=env).returncode

    remote_node: Any = ray.remote(Node)
    ray.init()
    bundle = {k: v for k, v in spec["bundle"].items() if v}
    group = placement_group([dict(bundle) for _ in range(spec["nodes"])], strategy=spec["strategy"])
    ray.get(group.ready())
    nodes = [
        remote_node.options(
            num_cpus=0,
            scheduling_strategy=strategies.PlacementGroupSchedulingStrategy(
                placement_group=group, placement_group_bundle_index=i
            ),
        ).remote()
        for i in range(spec["nodes"])
    ]
    master, port = ray.get(nodes[0].address.remote())
    codes = ray.get(
        [n.run.remote(node_command(spec, i, master, port)) for i, n in enumerate(nodes)]
    )
    print("flarekit: node exit codes", codes, flush=True)
    return exit_code(list(codes))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
