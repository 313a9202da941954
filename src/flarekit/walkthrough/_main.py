"""``python -m flarekit.walkthrough``: where the walkthrough runs, and how it ends.

Without a cluster configured (no ``--kubeconfig`` and no ``FLAREKIT_KUBECONFIG``), it starts
the practice cluster and runs every step there, the admin setup included. With
``--real-stack`` it starts a real control plane with the real operators on 127.0.0.1 instead
(see :mod:`flarekit.walkthrough.backends`), admin setup included too. With a cluster, the
same steps run on that cluster, in the user's namespace and queue, and the admin setup runs
only with ``--setup-queues``. Either way it tears down what it created, also after a failure,
and exits 0 only when every step worked and (on the clusters it started itself) the check
that nothing it made is left passes.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING

import flarekit
from flarekit.walkthrough import backends
from flarekit.walkthrough._footprint import Footprint
from flarekit.walkthrough._narrate import Narrator
from flarekit.walkthrough._runtime import RUNTIME_NAME
from flarekit.walkthrough._steps import Plan, Walkthrough

if TYPE_CHECKING:
    from flarekit import Client
    from flarekit_testing import ControlPlane, FakeCluster

__all__ = ["KUBECONFIG_ENV", "main", "parser", "run_tour"]

#: The environment variable that points the walkthrough at a real cluster.
KUBECONFIG_ENV = "FLAREKIT_KUBECONFIG"
#: How long the practice cluster may take to remove pods and Workloads after a teardown.
_SETTLE_SECONDS = 10.0
#: The same on the real stack, where the garbage collector removes them (seconds).
REAL_SETTLE_SECONDS = 120.0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m flarekit.walkthrough",
        description=(
            "A guided tour of flarekit: Kueue queues, a Ray cluster, a training job and a "
            "clean teardown. Without --kubeconfig (or $FLAREKIT_KUBECONFIG) it runs on a "
            "practice cluster in this process, with simulated operators whose pods run here."
        ),
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--kubeconfig",
        default=os.environ.get(KUBECONFIG_ENV) or None,
        help=f"run on the cluster of this kubeconfig (default: ${KUBECONFIG_ENV})",
    )
    where.add_argument(
        "--real-stack",
        action="store_true",
        help="run on a real Kubernetes control plane started on 127.0.0.1 with the real "
        "Kueue, KubeRay, JobSet and Kubeflow Trainer operators (built by `make "
        "control-plane`; needs the 'testing' extra). Its nodes are simulated (KWOK): pods "
        "are scheduled and reported running, but no container runs",
    )
    p.add_argument("--context", help="kubeconfig context (default: the current one)")
    p.add_argument("--namespace", help="where to create things (default: the context's namespace)")
    p.add_argument(
        "--local-queue",
        help="the Kueue LocalQueue to submit to (default: the namespace's default queue, or "
        "the one --setup-queues creates)",
    )
    p.add_argument(
        "--setup-queues",
        action="store_true",
        help="on a real cluster, also create a ResourceFlavor, ClusterQueue and LocalQueue "
        "(and the training runtime if missing), and remove them at the end",
    )
    p.add_argument("--image", help="container image of the training job (default: the runtime's)")
    p.add_argument("--ray-image", help="Ray image of the Ray cluster (default: rayproject/ray)")
    p.add_argument("--runtime", default=RUNTIME_NAME, help="the training runtime to start from")
    p.add_argument(
        "--prefix", default="walkthrough", help="prefix of every name the walkthrough creates"
    )
    p.add_argument(
        "--timeout", type=float, default=900.0, help="seconds to wait for each step (900)"
    )
    p.add_argument(
        "--poll",
        type=float,
        help="seconds between checks on the cluster (default: 2, or 0.1 on the practice one)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the training function's random data (0); another seed, other losses",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _practice(namespace: str) -> tuple[FakeCluster, flarekit.Client]:
    fake = backends.start_practice_cluster()
    if fake.get("namespaces", namespace) is None:
        fake.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    return fake, flarekit.Client(
        flarekit.from_kubeconfig(fake.kubeconfig_path), namespace=namespace
    )


def _settled(fake: FakeCluster) -> list[str]:
    """What is left on the practice cluster once its operators have caught up."""
    deadline = time.monotonic() + _SETTLE_SECONDS
    while True:
        left = backends.leftovers(fake)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _real_stack(say: Narrator, namespace: str) -> tuple[ControlPlane, flarekit.Client]:
    missing = backends.why_no_real_node()
    nodes = (
        "and one real node (containerd, the kubelet, kube-proxy, CoreDNS) where the Ray "
        "cluster and the training job run in containers"
        if not missing
        else f"on nodes simulated by KWOK: pods are scheduled and reported running, but no "
        f"container runs ({missing})"
    )
    say.say(
        "--real-stack starts a real Kubernetes control plane on 127.0.0.1 (etcd, "
        "kube-apiserver, controller-manager, scheduler) with the real Kueue, KubeRay, JobSet "
        f"and Kubeflow Trainer controllers, {nodes}: a minute or more."
    )
    say.code(f"""
        plane = ControlPlane(operators={list(backends.OPERATORS)!r}, kubelet={not missing}).start()
        client = Client(from_kubeconfig(plane.kubeconfig_path))
        """)
    plane = backends.start_real_stack()
    releases = ", ".join(f"{family} {version}" for family, version in plane.operators.items())
    say.done(f"started in {plane.startup_seconds or 0:.0f} s: {releases}")
    return plane, flarekit.Client(
        flarekit.from_kubeconfig(plane.kubeconfig_path), namespace=namespace
    )


def _run_steps(tour: Walkthrough) -> None:
    tour.setup_queues()
    tour.create_cluster()
    tour.wait_for_cluster()
    tour.show_details()
    tour.run_ray_job()
    tour.submit_job()
    tour.watch_job()


def run_tour(
    client: Client,
    plan: Plan,
    say: Narrator,
    footprint: Footprint | None = None,
    settle: float = REAL_SETTLE_SECONDS,
) -> tuple[BaseException | None, list[str]]:
    """Every step, then the teardown (also after a failure), then, with a `footprint` taken
    before, the check that nothing new is left on the cluster. Returns the step's error, if
    one failed, and what the teardown could not remove or left behind."""
    tour = Walkthrough(client, plan, say)
    error: BaseException | None = None
    try:
        _run_steps(tour)
    except BaseException as exc:
        error = exc
    failures = tour.teardown()
    if footprint is not None:
        left = footprint.settled(settle, poll=min(plan.poll, 1.0))
        failures += [f"left behind: {item}" for item in left]
        if not left:
            say.done("checked: nothing the walkthrough made is left on the cluster")
    return error, failures


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    say = Narrator()
    fake: FakeCluster | None = None
    plane: ControlPlane | None = None
    error: BaseException | None = None
    failures: list[str] = []
    try:
        real_stack = bool(args.real_stack)
        practice = args.kubeconfig is None and not real_stack
        say.title("flarekit walkthrough")
        say.step("Connect to a cluster")
        if real_stack:
            plane, client = _real_stack(say, args.namespace or "default")
        elif practice:
            say.say(
                "No cluster is configured (no --kubeconfig, no $FLAREKIT_KUBECONFIG), so this "
                "starts a practice cluster in this process: a Kubernetes API with simulated "
                "KubeRay, Kueue, Kubeflow Trainer and AppWrapper operators, whose pods run "
                "here as processes: the training job trains with PyTorch on CPU, the Ray "
                "cluster is a local Ray. The code is the same as on a real cluster."
            )
            torch = backends.ensure_torch()
            say.done(f"PyTorch for the training pods: {torch}")
            say.code("client = Client()  # on a real cluster: your kubeconfig")
            fake, client = _practice(args.namespace or "default")
        else:
            say.code(f"client = Client(from_kubeconfig({args.kubeconfig!r}))")
            client = flarekit.Client(
                flarekit.from_kubeconfig(args.kubeconfig, args.context), namespace=args.namespace
            )
        say.done(f"connected to {client.server}, namespace {client.namespace}")
        plan = Plan(
            namespace=client.namespace,
            prefix=args.prefix,
            local_queue=args.local_queue,
            setup_queues=practice or real_stack or args.setup_queues,
            runtime=args.runtime,
            image=args.image,
            ray_image=args.ray_image,
            cluster_timeout=args.timeout,
            job_timeout=args.timeout,
            delete_timeout=args.timeout,
            poll=args.poll or (0.1 if practice else 0.5 if real_stack else 2.0),
            practice=practice,
            simulated_pods=plane is not None and plane.node is None,
            small_pods=plane is not None and plane.node is not None,
            seed=args.seed,
        )
        footprint = Footprint(client, client.namespace) if plane is not None else None
        error, failures = run_tour(client, plan, say, footprint)
        if fake is not None:
            left = _settled(fake)
            failures += [f"left behind: {item}" for item in left]
            if not left:
                say.done("checked: nothing is left on the practice cluster")
    except BaseException as exc:
        error = error or exc
    finally:
        if fake is not None:
            fake.stop()
            say.done("practice cluster stopped")
        if plane is not None:
            try:
                survivors = backends.stop_real_stack(plane)
            except Exception as exc:
                survivors = [f"stopping failed: {exc}"]
            failures += [f"real stack: {item}" for item in survivors]
            if not survivors:
                say.done("real stack stopped: none of its processes and files is left")
    if error is not None:
        if args.debug:
            traceback.print_exception(error)
        message = " ".join(part.strip() for part in str(error).splitlines()) or repr(error)
        print(f"error: {message}", file=sys.stderr)
        return 130 if isinstance(error, KeyboardInterrupt) else 1
    if failures:
        print(f"error: the teardown left things behind: {'; '.join(failures)}", file=sys.stderr)
        return 1
    say.step("Done")
    say.say(
        "That is the whole journey. Next: the same code on your cluster with "
        "`python -m flarekit.walkthrough --kubeconfig ~/.kube/config`, or the `flarekit` "
        "command (`flarekit cluster render -f cluster.yaml --out-dir out/` needs no cluster at all)."
    )
    return 0
