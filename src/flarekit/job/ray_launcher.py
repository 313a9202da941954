"""The entrypoint of a torchrun job on a Ray cluster: one torchrun per node, placed by Ray.

A Ray job's entrypoint runs once, on the head node. This program reserves one bundle per
node in a placement group (``STRICT_SPREAD``: N different nodes, all or nothing, which is
gang scheduling; ``SPREAD`` without gang), starts an actor in each bundle, and has every
actor run ``torchrun --nnodes N --node-rank i --master-addr <actor 0's node>`` with the
user's script or module and arguments.

Placement waits at most ``placement_timeout`` seconds (from the spec): a gang that cannot fit
ends the job with a message naming the bundles asked for and what the cluster has, instead of
waiting forever. Each node's torchrun runs under a watcher (`WATCHER`, its own session): when
the actor that started it dies (the job was stopped, Ray killed the actor), the watcher ends
every process torchrun started, ranks re-parented elsewhere included (it tracks them by PID and
start time while they run), first with SIGTERM, then SIGKILL; when torchrun ends by itself,
ranks it left behind are ended the same way. Ray's folding of similar log lines is turned off
for the job, so that every rank's lines reach its log.

It is sent to the cluster as its source (``python -c``: flarekit need not be installed
there) with its spec, JSON, as the one argument, and needs only Ray, which every Ray image
has. Ray (and what only the launcher uses) is imported inside `main`, so the rest is importable
and tested anywhere, cheaply.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:  # typing.NotRequired is 3.11+, and the cluster's Python may be older
    from typing import NotRequired


class LaunchSpec(TypedDict):
    """What the launcher is told to run (its one argument, as JSON)."""

    nodes: int
    procs: int
    script: str | None
    module: str | None
    args: list[str]
    env: dict[str, str]
    bundle: dict[str, float]
    strategy: str
    placement_timeout: NotRequired[float]


def node_command(spec: LaunchSpec, rank: int, master: str, port: int) -> list[str]:
    """What node `rank` runs: torchrun with the user's script or module."""
    module = spec["module"]
    target = ["-m", module] if module else [str(spec["script"])]
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


#: Runs one node's command and ends its whole process tree when its parent (the Ray actor)
#: goes away. Python's standard library only, Linux /proc: it runs on the Ray nodes.
WATCHER = """\
import json, os, signal, subprocess, sys, time
command, owner, report = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])

def table():
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/" + entry + "/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            out[int(entry)] = (int(fields[1]), fields[19], fields[0])
    return out

owner_started = table().get(owner, (0, None, ""))[1]
child = subprocess.Popen(command)
tracked = {}

def track():
    procs, todo = table(), [child.pid]
    while todo:
        pid = todo.pop()
        if pid in procs and pid not in tracked:
            tracked[pid] = procs[pid][1]
        todo.extend(p for p, (parent, _, _) in procs.items() if parent == pid and p not in tracked)

def running(skip):
    procs = table()
    return [p for p, started in tracked.items()
            if p != skip and p in procs and procs[p][1] == started and procs[p][2] != "Z"]

def end(skip):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in running(skip):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + (5 if sig == signal.SIGTERM else 0)
        while time.monotonic() < deadline and running(skip):
            time.sleep(0.1)

def owner_alive():
    found = table().get(owner)
    return found is not None and found[1] == owner_started and found[2] != "Z"

while child.poll() is None:
    track()
    if not owner_alive():
        end(None)
        child.wait()
        sys.exit(137)
    time.sleep(0.2)
track()
end(child.pid)
os.write(report, str(child.returncode).encode())
"""
#: Starts `WATCHER` detached (its own session, not a child of the Ray worker, so that Ray
#: ending the worker and its children does not end the watcher before it has cleaned up).
DETACH = """\
import subprocess, sys
subprocess.Popen([sys.executable, "-c", *sys.argv[1:]], start_new_session=True,
                 pass_fds=(int(sys.argv[-1]),))
"""


def placement_failure(
    spec: LaunchSpec,
    cluster: Mapping[str, float],
    available: Mapping[str, float],
    nodes: int,
) -> str:
    """Why the gang could not be placed: what was asked for and what the cluster has."""
    bundle = {k: v for k, v in spec["bundle"].items() if v}
    return (
        f"flarekit: could not place {spec['nodes']} bundles of {bundle} "
        f"({spec['strategy']}: {'one per node' if spec['strategy'] == 'STRICT_SPREAD' else 'spread'}"
        f") within {spec['placement_timeout']:g}s; the cluster has {nodes} alive node(s) with "
        f"{dict(sorted(cluster.items()))} in all, available now: {dict(sorted(available.items()))}"
    )


def exit_code(codes: Sequence[int]) -> int:
    """The job's exit code: the first non-zero node code by magnitude, else 0."""
    return max(codes, key=abs) if any(codes) else 0


def main(argv: Sequence[str]) -> int:
    # Imported here, not at the top: flarekit imports this module for `node_command`, and
    # importing the facade should not pay for what only the launcher itself uses.
    import importlib
    import json
    import os
    import signal
    import socket
    import subprocess

    # Ray folds lines from different workers that differ only in their numbers into one line
    # "[repeated Nx across cluster]": that would hide every rank's output but the first one's
    # (the ranks print the same text with their own numbers). Read when Ray is imported.
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    ray: Any = importlib.import_module("ray")
    placement_group: Any = importlib.import_module("ray.util.placement_group").placement_group
    strategies: Any = importlib.import_module("ray.util.scheduling_strategies")
    timed_out: Any = importlib.import_module("ray.exceptions").GetTimeoutError

    spec: LaunchSpec = json.loads(argv[1])

    class Node:
        def address(self) -> tuple[str, int]:
            with socket.socket() as s:
                s.bind(("", 0))
                return ray.util.get_node_ip_address(), s.getsockname()[1]

        def run(self, command: list[str]) -> int:
            """Run `command` under a detached watcher; its exit code (137 if the watcher
            went away without reporting one)."""
            env = {**os.environ, **spec["env"]}
            read, write = os.pipe()
            try:
                arguments = [WATCHER, json.dumps(command), str(os.getpid()), str(write)]
                starter = [sys.executable, "-c", DETACH, *arguments]
                subprocess.run(starter, env=env, pass_fds=(write,), check=True)
            finally:
                os.close(write)
            with os.fdopen(read, "rb") as answer:
                code = answer.read().decode().strip()
            return int(code) if code.lstrip("-").isdigit() else 137

    remote_node: Any = ray.remote(Node)
    ray.init()
    bundle = {k: v for k, v in spec["bundle"].items() if v}
    group = placement_group([dict(bundle) for _ in range(spec["nodes"])], strategy=spec["strategy"])
    try:
        ray.get(group.ready(), timeout=spec.get("placement_timeout"))
    except timed_out:
        alive = sum(1 for node in ray.nodes() if node.get("Alive"))
        message = placement_failure(spec, ray.cluster_resources(), ray.available_resources(), alive)
        print(message, file=sys.stderr, flush=True)
        importlib.import_module("ray.util").remove_placement_group(group)
        return 2
    nodes = [
        remote_node.options(
            num_cpus=0,
            scheduling_strategy=strategies.PlacementGroupSchedulingStrategy(
                placement_group=group, placement_group_bundle_index=i
            ),
        ).remote()
        for i in range(spec["nodes"])
    ]

    def stop(signum: int, frame: object) -> None:
        # The job is being stopped: end the actors now, so that their watchers end every
        # process the nodes started (see WATCHER).
        for node in nodes:
            ray.kill(node)
        sys.exit(128 + signum)

    before = signal.signal(signal.SIGTERM, stop)
    try:
        master, port = ray.get(nodes[0].address.remote())
        codes = ray.get(
            [n.run.remote(node_command(spec, i, master, port)) for i, n in enumerate(nodes)]
        )
    finally:
        signal.signal(signal.SIGTERM, before)
    print("flarekit: node exit codes", codes, flush=True)
    return exit_code(list(codes))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
