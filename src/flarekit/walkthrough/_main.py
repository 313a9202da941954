"""``python -m flarekit.walkthrough``: where the walkthrough runs, and how it ends.

Without a cluster configured (no ``--kubeconfig`` and no ``FLAREKIT_KUBECONFIG``), it starts
the practice cluster and runs every step there, the admin setup included. With one, the same
steps run on that cluster, in the user's namespace and queue, and the admin setup runs only
with ``--setup-queues``. Either way it tears down what it created, also after a failure, and
exits 0 only when every step worked and nothing it made is left.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING

from flarekit.walkthrough._narrate import Narrator
from flarekit.walkthrough._runtime import RUNTIME_NAME
from flarekit.walkthrough._steps import Plan, Walkthrough

if TYPE_CHECKING:
    from flarekit import Client
    from flarekit.testing import FakeCluster

__all__ = ["KUBECONFIG_ENV", "main", "parser"]

#: The environment variable that points the walkthrough at a real cluster.
KUBECONFIG_ENV = "FLAREKIT_KUBECONFIG"
#: How long the practice cluster may take to remove pods and Workloads after a teardown.
_SETTLE_SECONDS = 10.0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m flarekit.walkthrough",
        description=(
            "A guided tour of flarekit: Kueue queues, a Ray cluster, a training job and a "
            "clean teardown. Without --kubeconfig (or $FLAREKIT_KUBECONFIG) it runs on a "
            "practice cluster in this process, with simulated operators."
        ),
    )
    p.add_argument(
        "--kubeconfig",
        default=os.environ.get(KUBECONFIG_ENV) or None,
        help=f"run on the cluster of this kubeconfig (default: ${KUBECONFIG_ENV})",
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
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _practice(namespace: str) -> tuple[FakeCluster, Client]:
    from flarekit import Client, from_kubeconfig
    from flarekit.walkthrough._practice import start_practice_cluster

    fake = start_practice_cluster()
    if fake.get("namespaces", namespace) is None:
        fake.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    return fake, Client(from_kubeconfig(fake.kubeconfig_path), namespace=namespace)


def _settled(fake: FakeCluster) -> list[str]:
    """What is left on the practice cluster once its operators have caught up."""
    from flarekit.walkthrough._practice import leftovers

    deadline = time.monotonic() + _SETTLE_SECONDS
    while True:
        left = leftovers(fake)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _run_steps(tour: Walkthrough) -> None:
    tour.setup_queues()
    tour.create_cluster()
    tour.wait_for_cluster()
    tour.show_details()
    tour.submit_job()
    tour.watch_job()


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    say = Narrator()
    fake: FakeCluster | None = None
    error: BaseException | None = None
    failures: list[str] = []
    try:
        from flarekit import Client, from_kubeconfig

        practice = args.kubeconfig is None
        say.title("flarekit walkthrough")
        say.step("Connect to a cluster")
        if practice:
            say.say(
                "No cluster is configured (no --kubeconfig, no $FLAREKIT_KUBECONFIG), so this "
                "starts a practice cluster in this process: a Kubernetes API with simulated "
                "KubeRay, Kueue, Kubeflow Trainer and AppWrapper operators. The code is the "
                "same as on a real cluster."
            )
            say.code("client = Client()  # on a real cluster: your kubeconfig")
            fake, client = _practice(args.namespace or "default")
        else:
            say.code(f"client = Client(from_kubeconfig({args.kubeconfig!r}))")
            client = Client(
                from_kubeconfig(args.kubeconfig, args.context), namespace=args.namespace
            )
        say.done(f"connected to {client.server}, namespace {client.namespace}")
        plan = Plan(
            namespace=client.namespace,
            prefix=args.prefix,
            local_queue=args.local_queue,
            setup_queues=practice or args.setup_queues,
            runtime=args.runtime,
            image=args.image,
            ray_image=args.ray_image,
            cluster_timeout=args.timeout,
            job_timeout=args.timeout,
            delete_timeout=args.timeout,
            poll=args.poll or (0.1 if practice else 2.0),
            practice=practice,
        )
        tour = Walkthrough(client, plan, say)
        try:
            _run_steps(tour)
        except BaseException as exc:
            error = exc
        failures = tour.teardown()
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
