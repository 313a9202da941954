"""The walkthrough's steps: queues, a Ray cluster, a training job, and a clean teardown.

Each step prints what it is about to do and the flarekit call that does it, then does it
with the public API, exactly as a user would in a notebook. Everything a step creates is
recorded with the way to remove it, and :meth:`Walkthrough.teardown` removes it all, newest
first, also when a step failed halfway, so neither the practice cluster nor a real one is
left with the walkthrough's objects.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import flarekit
import flarekit.client
import flarekit.kueue
from flarekit._wait import wait_until
from flarekit.walkthrough._narrate import Narrator
from flarekit.walkthrough._runtime import RUNTIME_NAME, torch_distributed_runtime
from flarekit.walkthrough._train import RAY_ENTRYPOINT, train_line
from flarekit_models.ray import v1 as ray_v1
from flarekit_models.trainer import v1alpha1 as trainer_v1alpha1

if TYPE_CHECKING:
    from flarekit import Client, Cluster, RayJob, TrainJob
    from flarekit.kueue import AdminSpec
    from flarekit_models import KubeResource

__all__ = ["Plan", "Walkthrough"]

#: Labels everything the walkthrough creates, so it can be found (and cleaned up) by hand.
CREATED_BY = {"app.kubernetes.io/created-by": "flarekit-walkthrough"}


@dataclass
class Plan:
    """What the walkthrough will do, and with which names and waiting times."""

    namespace: str
    prefix: str = "walkthrough"
    local_queue: str | None = None
    setup_queues: bool = True
    runtime: str = RUNTIME_NAME
    image: str | None = None
    ray_image: str | None = None
    cluster_timeout: float = 600.0
    job_timeout: float = 1800.0
    delete_timeout: float = 300.0
    poll: float = 1.0
    practice: bool = False
    #: The cluster's pods run nothing (the real stack's KWOK nodes).
    simulated_pods: bool = False
    #: The seed of the training function's random data.
    seed: int = 0
    #: The pods ask for fractions of a CPU: the real stack's one real node has the machine's
    #: (two, on the project's CI), and the Ray cluster and the training job run at once.
    small_pods: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def head_cpu(self) -> int | str:
        return "500m" if self.small_pods else 1

    @property
    def worker_cpu(self) -> int | str:
        return "250m" if self.small_pods else 1

    @property
    def cluster_name(self) -> str:
        return f"{self.prefix}-ray"

    @property
    def job_name(self) -> str:
        return f"{self.prefix}-train"

    @property
    def ray_job_name(self) -> str:
        return f"{self.prefix}-squares"

    @property
    def flavor(self) -> str:
        return f"{self.prefix}-flavor"

    @property
    def cluster_queue(self) -> str:
        return f"{self.prefix}-cluster-queue"

    @property
    def queue(self) -> str | None:
        """The LocalQueue to use: as given; with the admin setup, one it creates."""
        if self.local_queue is not None:
            return self.local_queue
        return f"{self.prefix}-queue" if self.setup_queues else None


class Walkthrough:
    """Runs the steps against `client` and remembers how to undo each one."""

    def __init__(self, client: Client, plan: Plan, narrator: Narrator) -> None:
        self.client = client
        self.plan = plan
        self.say = narrator
        self._undo: list[tuple[str, Callable[[], None]]] = []
        self.cluster: Cluster | None = None
        self.job: TrainJob | None = None

    # -- helpers ------------------------------------------------------------------------------

    def _remember(self, what: str, undo: Callable[[], None]) -> None:
        self._undo.append((what, undo))

    def _exists(self, kind: type[KubeResource], name: str, namespace: str | None = None) -> bool:
        try:
            self.client.get(kind, name, namespace=namespace)
        except flarekit.NotFound:
            return False
        return True

    def _delete_and_wait(
        self, kind: type[KubeResource], name: str, namespace: str | None = None
    ) -> None:
        try:
            self.client.delete(kind, name, namespace=namespace)
        except flarekit.NotFound:
            return

        def fetch() -> KubeResource | None:
            try:
                return self.client.get(kind, name, namespace=namespace)
            except flarekit.NotFound:
                return None

        where = f"{namespace}/{name}" if namespace else name
        wait_until(
            fetch,
            lambda obj: obj is None,
            None,
            timeout=self.plan.delete_timeout,
            describe=f"{kind.__name__} {where} to be deleted",
            poll=min(self.plan.poll, 0.5),
        )

    def _refuse_existing(
        self, kind: type[KubeResource], name: str, namespace: str | None, hint: str
    ) -> None:
        if self._exists(kind, name, namespace):
            where = f"{namespace}/{name}" if namespace else name
            raise RuntimeError(
                f"a {kind.__name__} {where} already exists and the walkthrough would replace "
                f"and then delete it; {hint}"
            )

    # -- steps --------------------------------------------------------------------------------

    def setup_queues(self) -> None:
        """As a platform admin: a ResourceFlavor, a ClusterQueue with quota, a LocalQueue (and,
        where missing, the training runtime)."""
        plan, say = self.plan, self.say
        say.step("Set up Kueue queues, as a platform admin would")
        if not plan.setup_queues:
            say.say(
                "Skipped: on a real cluster your admin has set up the queues already (pass "
                "--setup-queues to create a ResourceFlavor, a ClusterQueue and a LocalQueue)."
            )
            self._show_queues()
            return
        queue = plan.queue
        assert queue is not None  # setup_queues names one
        say.say(
            "Kueue decides when work may start. A ResourceFlavor is a kind of node, a "
            "ClusterQueue holds the quota per flavor, and a LocalQueue is what users in a "
            "namespace submit to."
        )
        say.code(f"""
            apply_all(client, [
                ResourceFlavorSpec({plan.flavor!r}),
                ClusterQueueSpec({plan.cluster_queue!r},
                    flavors={{{plan.flavor!r}: {{'cpu': 8, 'memory': '32Gi'}}}}),
                LocalQueueSpec({queue!r}, namespace={plan.namespace!r},
                    cluster_queue={plan.cluster_queue!r}),
            ])
            """)
        specs: list[AdminSpec] = [
            flarekit.ResourceFlavorSpec(plan.flavor, node_labels={}),
            flarekit.ClusterQueueSpec(
                plan.cluster_queue, flavors={plan.flavor: {"cpu": 8, "memory": "32Gi"}}
            ),
            flarekit.LocalQueueSpec(queue, plan.namespace, plan.cluster_queue),
        ]
        version = flarekit.client.preferred_kueue_version(self.client)
        new = [
            s
            for s in specs
            if not self._exists(
                flarekit.kueue.kueue_model(version, s.kind), s.name, getattr(s, "namespace", None)
            )
        ]
        flarekit.apply_all(self.client, specs)
        for spec in new:
            kind = flarekit.kueue.kueue_model(version, spec.kind)
            namespace = getattr(spec, "namespace", None)
            undo = functools.partial(self._delete_and_wait, kind, spec.name, namespace)
            self._remember(f"{spec.kind} {spec.name}", undo)
        say.done(
            f"ResourceFlavor {plan.flavor}, ClusterQueue {plan.cluster_queue} (8 CPUs, 32Gi), "
            f"LocalQueue {plan.namespace}/{queue}"
        )
        self._setup_runtime()
        self._show_queues()

    def _setup_runtime(self) -> None:
        plan, say = self.plan, self.say
        if self._exists(trainer_v1alpha1.ClusterTrainingRuntime, plan.runtime):
            say.done(f"ClusterTrainingRuntime {plan.runtime} is installed already")
            return
        say.say(
            f"Training jobs start from a runtime; this cluster has no {plan.runtime!r} "
            "ClusterTrainingRuntime yet, so the admin adds one (PyTorch, torchrun on every node)."
        )
        runtime = trainer_v1alpha1.ClusterTrainingRuntime.model_validate(
            torch_distributed_runtime(plan.runtime, labels=CREATED_BY)
        )
        self.client.create(runtime)
        self._remember(
            f"ClusterTrainingRuntime {plan.runtime}",
            lambda: self._delete_and_wait(trainer_v1alpha1.ClusterTrainingRuntime, plan.runtime),
        )
        say.done(f"ClusterTrainingRuntime {plan.runtime}")

    def _show_queues(self) -> None:
        self.say.say("The queues you can submit to:")
        self.say.code(f"print(list_queues(client, {self.plan.namespace!r}))")
        self.say.show(flarekit.list_queues(self.client, self.plan.namespace))

    def create_cluster(self) -> None:
        """Describe a small Ray cluster and create it in the queue."""
        plan, say = self.plan, self.say
        say.step("Create a Ray cluster")
        say.say(
            "A ClusterConfiguration describes the cluster in a few parameters; it is checked "
            "before anything is sent. apply() creates it (or updates it) on the cluster."
        )
        queue = f", local_queue={plan.queue!r}" if plan.queue else ""
        say.code(f"""
            config = ClusterConfiguration(name={plan.cluster_name!r}, num_workers=1,
                head_cpu_requests={plan.head_cpu!r}, head_memory_requests=4,
                worker_cpu_requests={plan.worker_cpu!r}, worker_memory_requests=2{queue})
            cluster = Cluster(config).apply()
            """)
        self._refuse_existing(
            ray_v1.RayCluster, plan.cluster_name, plan.namespace, "pass another --prefix"
        )
        config = flarekit.ClusterConfiguration(
            name=plan.cluster_name,
            namespace=plan.namespace,
            image=plan.ray_image,
            num_workers=1,
            head_cpu_requests=plan.head_cpu,
            head_cpu_limits=1,
            head_memory_requests=4,
            head_memory_limits=4,
            worker_cpu_requests=plan.worker_cpu,
            worker_cpu_limits=1,
            worker_memory_requests=2,
            worker_memory_limits=2,
            labels=dict(CREATED_BY),
            local_queue=plan.queue,
        )
        self.cluster = cluster = flarekit.Cluster(config, self.client)
        self._remember(f"Ray cluster {plan.cluster_name}", self._down_cluster)
        cluster.apply()
        queued = (
            f" in LocalQueue {cluster.config.local_queue}" if cluster.config.local_queue else ""
        )
        say.done(f"RayCluster {plan.namespace}/{plan.cluster_name} created{queued}")

    def _down_cluster(self) -> None:
        if self.cluster is not None:
            self.cluster.down(wait=True, timeout=self.plan.delete_timeout, poll=0.2)

    def wait_for_cluster(self) -> None:
        plan, say = self.plan, self.say
        assert self.cluster is not None
        say.step("Wait for the Ray cluster to be ready")
        say.say(
            "Kueue admits the cluster when its queue has room; then KubeRay starts the head "
            "and the workers."
        )
        say.code(f"cluster.wait_ready(timeout={plan.cluster_timeout:g})")
        status = self.cluster.wait_ready(timeout=plan.cluster_timeout, poll=plan.poll)
        say.show(status)

    def show_details(self) -> None:
        say = self.say
        assert self.cluster is not None
        say.step("Look at the cluster's details")
        say.say(
            "details() reads what the cluster reports: resources per group, the ray:// "
            "address to connect to from inside the cluster, and the dashboard."
        )
        say.code("print(cluster.details())")
        say.show(self.cluster.details())
        say.say(
            "From a pod in the cluster, ray.init(cluster.cluster_uri()) connects to it; "
            "no Ray installation is needed on your side to manage it."
        )

    def run_ray_job(self) -> None:
        """A Ray job on the cluster: KubeRay submits its entrypoint to the cluster's Ray."""
        plan, say = self.plan, self.say
        say.step("Run a Ray job on the cluster")
        say.say(
            "A RayJob runs a command on a Ray cluster: KubeRay submits it to the cluster's "
            "dashboard, and its output is the job's log. This one squares numbers in Ray "
            "tasks and prints what the cluster offers."
        )
        say.code(f"""
            rayjob = RayJob({plan.ray_job_name!r}, entrypoint=ENTRYPOINT,
                cluster_name={plan.cluster_name!r}).submit()
            rayjob.wait(timeout={plan.job_timeout:g})
            print(rayjob.logs())
            """)
        say.show(f"ENTRYPOINT = {RAY_ENTRYPOINT!r}")
        self._refuse_existing(
            ray_v1.RayJob, plan.ray_job_name, plan.namespace, "pass another --prefix"
        )
        job = flarekit.RayJob(
            plan.ray_job_name,
            RAY_ENTRYPOINT,
            namespace=plan.namespace,
            cluster_name=plan.cluster_name,
            labels=dict(CREATED_BY),
            client=self.client,
        )
        self._remember(f"RayJob {plan.ray_job_name}", lambda: self._delete_job(job, ray_v1.RayJob))
        job.submit()
        status = job.wait(timeout=plan.job_timeout, poll=plan.poll)
        say.show(status)
        logs = job.logs()
        assert isinstance(logs, str)
        if plan.simulated_pods:
            say.say("This cluster's pods are simulated: no Ray ran, and the log says so.")
        say.say("The job's log:")
        say.show(logs or "(empty)")

    def submit_job(self) -> None:
        plan, say = self.plan, self.say
        say.step("Submit a training job to the queue")
        say.say(
            f"A TrainJob runs a PyTorch function on 2 nodes from the {plan.runtime!r} runtime. "
            "flarekit sends the function's source as the container's command, so there is no "
            "image to build."
        )
        queue = f", local_queue={plan.queue!r}" if plan.queue else ""
        image = f", image={plan.image!r}" if plan.image else ""
        say.code(f"""
            job = TrainJob({plan.job_name!r}, runtime={plan.runtime!r}, func=train_line,
                func_args={{'epochs': 3, 'seed': {plan.seed}}}, num_nodes=2, num_proc_per_node=1,
                resources_per_node={{'cpu': {plan.worker_cpu!r}, 'memory': '2Gi'}}{queue}{image})
            job.submit()
            """)
        self._refuse_existing(
            trainer_v1alpha1.TrainJob, plan.job_name, plan.namespace, "pass another --prefix"
        )
        job = flarekit.TrainJob(
            plan.job_name,
            namespace=plan.namespace,
            runtime=plan.runtime,
            image=plan.image,
            func=train_line,
            func_args={"epochs": 3, "seed": plan.seed},
            num_nodes=2,
            num_proc_per_node=1,
            resources_per_node={"cpu": plan.worker_cpu, "memory": "2Gi"},
            labels=dict(CREATED_BY),
            local_queue=plan.queue,
            client=self.client,
        )
        self.job = job
        self._remember(
            f"TrainJob {plan.job_name}",
            lambda: self._delete_job(job, trainer_v1alpha1.TrainJob),
        )
        job.submit()
        say.done(f"TrainJob {plan.namespace}/{plan.job_name} submitted: {job.status().state.value}")

    def _delete_job(self, job: TrainJob | RayJob, model: type[KubeResource]) -> None:
        job.delete()
        self._delete_and_wait(model, job.name, self.plan.namespace)

    def watch_job(self) -> None:
        plan, say = self.plan, self.say
        assert self.job is not None
        say.step("Watch the training job finish and read its logs")
        say.code(f"job.wait(timeout={plan.job_timeout:g})\nprint(job.logs())")
        status = self.job.wait(timeout=plan.job_timeout, poll=plan.poll)
        say.show(status)
        logs = self.job.logs()
        assert isinstance(logs, str)
        if plan.simulated_pods:
            say.say(
                "This cluster's pods are simulated: no container ran, so train_line printed "
                "nothing and the log says so (on a real cluster it holds each epoch's loss)."
            )
        else:
            say.say(
                f"What train_line printed on the first node: the loss PyTorch computed after "
                f"each epoch, on data drawn with seed {plan.seed} (--seed changes it)."
            )
        say.say("The first node's log:")
        say.show(logs or "(empty)")

    def teardown(self) -> list[str]:
        """Remove everything the steps created, newest first; returns what could not be."""
        say = self.say
        say.step("Tear everything down")
        say.code("job.delete()\nrayjob.delete()\ncluster.down(wait=True)")
        failures: list[str] = []
        while self._undo:
            what, undo = self._undo.pop()
            try:
                undo()
            except Exception as exc:  # keep going: remove as much as possible
                failures.append(f"{what}: {exc}")
                say.done(f"could not remove {what}: {exc}")
            else:
                say.done(f"removed {what}")
        return failures
