"""One log stream for every pod of a job: ``kubectl logs -l ... --prefix -f``, for a job.

Why: a distributed job's output is spread over its nodes, and a failure on node 3 is found by
reading node 3. `follow_all_nodes` follows every pod of the job at once, each in a thread of
its own, and yields their lines in the order they arrive, each prefixed ``[<rank>/<pod>]``;
lines of one pod keep their order. Pods that appear later (a node that started late, a pod
recreated after a failure: a new pod, or the same name with a new uid) are picked up as the
job's pods are listed again; a container restarted in place is followed on by
`flarekit.client._pods.follow_logs`. The stream ends once the job has ended and every
pod's log has been read to its end (or, for pods that outlive the job, such as the pods of a
Ray cluster a RayJob ran on, `grace` seconds after the job ended).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Protocol

import flarekit.client

if TYPE_CHECKING:
    from flarekit.client import Client, PodInfo
    from flarekit.job._jobstate import JobStatus
    from flarekit_models import KubeResource


class LoggedJob(Protocol):
    """What the stream reads of a job (a `KubeJob`): where it runs, its object, its status
    and the selectors of its pods. A protocol, so that this module needs no job class."""

    def _connection(self) -> tuple[Client, str]: ...

    def _fetch(self) -> KubeResource: ...

    def _status_of(self, obj: KubeResource) -> JobStatus: ...

    def _pod_selectors(self, obj: KubeResource) -> list[Mapping[str, str]]: ...


__all__ = ["follow_all_nodes", "job_pods", "node_rank"]

#: Seconds a stream keeps reading pods that outlive their job, after the job ended.
GRACE = 5.0


def node_rank(pod: PodInfo) -> str:
    """The pod's place in its job as its users number it: the torchrun node rank of a
    Trainer or training-operator pod (a PyTorchJob's master is 0, worker ``i`` is ``i+1``),
    ``head`` or ``worker`` for a Ray node, ``<replicated job>-<index>`` for other JobSet
    pods (``launcher-0``), else ``-``."""
    role, index = pod.role, pod.index
    if role == "master":
        return str(index or 0)
    if (
        role == "worker"
        and index is not None
        and "training.kubeflow.org/replica-type" in pod.labels
    ):
        return str(index + 1)
    if role == "node" and index is not None:
        return str(index)
    if role is not None and index is not None:
        return f"{role}-{index}"
    return role or "-"


class _Follower(threading.Thread):
    """Follows one pod's log into the shared queue; ``None`` marks its end."""

    def __init__(
        self,
        client: Client,
        pod: PodInfo,
        out: queue.Queue[tuple[str, str | None]],
        stop: threading.Event,
        tail: int | None,
        since: float | None,
    ) -> None:
        super().__init__(name=f"logs-{pod.name}", daemon=True)
        self.client, self.pod, self.out, self.stop = client, pod, out, stop
        self.tail, self.since = tail, since
        self.prefix = f"[{node_rank(pod)}/{pod.name}]"
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for line in flarekit.client.follow_logs(
                self.client,
                self.pod.namespace,
                self.pod.name,
                container=self.pod.default_container,
                tail=self.tail,
                since=self.since,
            ):
                if self.stop.is_set():
                    return
                self.out.put((self.prefix, line))
        except BaseException as exc:  # handed to the reader, which raises it
            self.error = exc
        finally:
            self.out.put((self.prefix, None))


def job_pods(client: Client, namespace: str, selectors: list[Mapping[str, str]]) -> list[PodInfo]:
    """The pods of a job (every selector's), oldest first."""
    found: dict[str, PodInfo] = {}
    for selector in selectors:
        for pod in flarekit.client.list_pods(client, namespace, selector):
            found.setdefault(pod.name, pod)
    return sorted(found.values(), key=lambda p: (p.created, p.name))


def follow_all_nodes(
    job: LoggedJob,
    *,
    tail: int | None = None,
    since: float | None = None,
    prefix: bool = True,
    poll: float = 1.0,
    grace: float = GRACE,
) -> Iterator[str]:
    """Every pod's log lines of `job` as they arrive, each as ``[<rank>/<pod>] <line>``
    (without the prefix when `prefix` is False), until the job has ended and its pods' logs
    are read. The job's pods are listed again every `poll` seconds (one GET of the job and a
    list of its pods per selector); `tail` and `since` apply to each pod's log. An error
    reading a pod's log is raised once the lines before it are yielded."""
    client, namespace = job._connection()
    lines: queue.Queue[tuple[str, str | None]] = queue.Queue()
    stop = threading.Event()
    followers: dict[tuple[str, str], _Follower] = {}
    open_streams = 0
    ended_at: float | None = None
    try:
        while True:
            try:
                obj = job._fetch()
                finished = job._status_of(obj).finished
                pods = job_pods(client, namespace, job._pod_selectors(obj))
            except flarekit.client.NotFound:  # the job was deleted: nothing more will come
                finished, pods = True, []
            for pod in pods:
                key = (pod.name, str(pod.metadata.uid or ""))
                if key not in followers:
                    follower = _Follower(client, pod, lines, stop, tail, since)
                    followers[key] = follower
                    open_streams += 1
                    follower.start()
            if finished and ended_at is None:
                ended_at = time.monotonic()
            deadline = time.monotonic() + poll
            while True:
                left = deadline - time.monotonic()
                if ended_at is not None and open_streams == 0:
                    return
                if left <= 0:
                    break
                try:
                    name, line = lines.get(timeout=left)
                except queue.Empty:
                    break
                if line is None:
                    open_streams -= 1
                    _raise_if_failed(followers, name)
                    continue
                yield f"{name} {line}" if prefix else line
            if ended_at is not None and time.monotonic() - ended_at >= grace:
                return
    finally:
        stop.set()


def _raise_if_failed(followers: Mapping[tuple[str, str], _Follower], prefix: str) -> None:
    for follower in followers.values():
        if follower.prefix == prefix and follower.error is not None:
            error, follower.error = follower.error, None
            raise error
