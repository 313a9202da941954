"""The pods an operator runs for a job, and their logs.

Jobs are custom resources, but their output lives in pods that KubeRay, JobSet or the training
operator create and label. This module finds those pods by label and reads or follows their
logs through the `Client` (the generated `Pod` model and the `log` subresource), with the
client's retry, timeout and error policy.

Following survives dropped connections without repeating lines. It always asks for
timestamped lines, remembers the newest timestamp seen and how many lines carried exactly that
timestamp, and on reconnecting asks for `sinceSeconds` covering the time since that line
arrived (measured on this machine's monotonic clock, plus a margin, so clock differences
between this machine and the node do not matter), then drops lines older than the newest seen
and the ones already seen at that very timestamp. A stream that ends while the container still
runs (an apiserver timeout, a restart) is resumed the same way; following stops when the
container or its pod has finished, or the pod is gone.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, overload

from flarekit._json import JsonValue
from flarekit.client._errors import ApiError, NotFound, Operation, unavailable
from flarekit.client._limits import TooLarge, UnsupportedEncoding
from flarekit.client._transport import Response, describe
from flarekit_models.core import v1 as core_v1
from flarekit_models.meta import v1 as meta_v1

if TYPE_CHECKING:
    from flarekit.client._client import Client
    from flarekit_models.core.v1 import Pod
    from flarekit_models.meta.v1 import ObjectMeta

__all__ = ["PodInfo", "check_log_options", "follow_logs", "list_pods", "read_logs"]

#: Labels that say which part of a job a pod plays, most specific first.
ROLE_LABELS = (
    "ray.io/node-type",  # KubeRay: head / worker
    "training.kubeflow.org/replica-type",  # training operator: master / worker
    "jobset.sigs.k8s.io/replicatedjob-name",  # JobSet (Trainer): node, launcher, initializers
)
#: Labels that number the pods of one role.
INDEX_LABELS = (
    "batch.kubernetes.io/job-completion-index",  # indexed Jobs (JobSet / Trainer)
    "training.kubeflow.org/replica-index",  # training operator
)
DEFAULT_CONTAINER_ANNOTATION = "kubectl.kubernetes.io/default-container"
FINISHED_PHASES = ("Succeeded", "Failed")
#: Extra seconds asked for when resuming, for the time a line spends between node and here.
RESUME_MARGIN = 5


@dataclass(frozen=True)
class PodInfo:
    """What a job's pod is and where it stands: enough to choose whose logs to read.

    `role` is the pod's part in its job (`head`/`worker` for Ray, `master`/`worker` for the
    training operator, the replicated job's name such as `node` for JobSet), `index` its number
    within that role, `containers` and `init_containers` the names logs can be read from, and
    `default_container` the one `kubectl logs` would pick. `pod` is the object as the API
    returned it.
    """

    name: str
    namespace: str
    phase: str
    containers: tuple[str, ...]
    init_containers: tuple[str, ...] = ()
    role: str | None = None
    index: int | None = None
    node_name: str | None = None
    pod: Pod = field(default_factory=lambda: _pod_model()(), compare=False, repr=False)

    @property
    def metadata(self) -> ObjectMeta:
        return self.pod.metadata or _meta_model()()

    @property
    def labels(self) -> dict[str, str]:
        return dict(self.metadata.labels or {})

    @property
    def created(self) -> str:
        return str(self.metadata.creation_timestamp or "")

    @property
    def finished(self) -> bool:
        return self.phase in FINISHED_PHASES

    @property
    def default_container(self) -> str | None:
        annotated = (self.metadata.annotations or {}).get(DEFAULT_CONTAINER_ANNOTATION)
        if annotated in self.containers:
            return str(annotated)
        return self.containers[0] if self.containers else None

    @classmethod
    def from_pod(cls, pod: Pod) -> PodInfo:
        """Read a pod that may lack any optional field, status in particular."""
        meta = pod.metadata or _meta_model()()
        labels = meta.labels or {}
        role = next((str(labels[k]) for k in ROLE_LABELS if labels.get(k)), None)
        index = next(
            (int(labels[k]) for k in INDEX_LABELS if str(labels.get(k, "")).isdigit()), None
        )
        spec = pod.spec
        return cls(
            name=meta.name or "",
            namespace=meta.namespace or "",
            phase=(pod.status.phase if pod.status else None) or "Pending",
            containers=tuple(c.name for c in spec.containers or ()) if spec else (),
            init_containers=tuple(c.name for c in spec.init_containers or ()) if spec else (),
            role=role,
            index=index,
            node_name=(spec.node_name if spec else None) or None,
            pod=pod,
        )

    @classmethod
    def from_dict(cls, pod: Mapping[str, JsonValue]) -> PodInfo:
        """Read a pod object given as JSON."""
        return cls.from_pod(_pod_model().model_validate(pod))


def _pod_model() -> type[core_v1.Pod]:
    return core_v1.Pod


def _meta_model() -> type[meta_v1.ObjectMeta]:
    return meta_v1.ObjectMeta


# -- requests ---------------------------------------------------------------------------------


def list_pods(
    client: Client, namespace: str, label_selector: str | Mapping[str, str]
) -> list[PodInfo]:
    """The pods in `namespace` matching `label_selector` (`"a=b,c in (d,e)"` or `{label:
    value}`), ordered by role, index and name."""
    pods = client.list(_pod_model(), namespace=namespace, label_selector=label_selector)
    found = [PodInfo.from_pod(pod) for pod in pods]
    return sorted(found, key=lambda p: (p.role or "", -1 if p.index is None else p.index, p.name))


def get_pod(client: Client, namespace: str, pod: str) -> PodInfo:
    """One pod by name (`NotFound` if it is not there)."""
    return PodInfo.from_pod(client.get(_pod_model(), pod, namespace=namespace))


def check_log_options(tail: int | None, since: float | None) -> None:
    """`ValueError` for a `tail` or `since` a log request cannot take (before any request:
    a job's follow checks them before it waits for its pod)."""
    _check(tail, None, since)


def _check(tail: int | None, container: str | None, since: float | None = None) -> None:
    if tail is not None and (isinstance(tail, bool) or not isinstance(tail, int) or tail < 0):
        raise ValueError(f"tail must be a whole number of lines >= 0 or None; got {tail!r}")
    if since is not None and (
        isinstance(since, bool) or not isinstance(since, int | float) or since <= 0
    ):
        raise ValueError(f"since must be a number of seconds > 0 or None; got {since!r}")
    if container is not None and (not isinstance(container, str) or not container):
        raise ValueError(f"container must be a container name or None; got {container!r}")


def _open_log(
    client: Client,
    namespace: str,
    pod: str,
    follow: bool,
    *,
    container: str | None = None,
    tail_lines: int | None = None,
    since_seconds: int | None = None,
    timestamps: bool = False,
) -> Response:
    """The response of a log request (streaming, without a read timeout, when `follow`)."""
    options = {
        "container": container,
        "tailLines": tail_lines,
        "sinceSeconds": since_seconds,
        "timestamps": "true" if timestamps else None,
        "follow": "true" if follow else None,
    }
    query = [(k, str(v)) for k, v in options.items() if v is not None]
    return client.open_subresource(
        _pod_model(), pod, "log", namespace=namespace, query=query, stream=follow
    )


@overload
def read_logs(
    client: Client,
    namespace: str,
    pod: str,
    *,
    container: str | None = ...,
    tail: int | None = ...,
    since: float | None = ...,
    timestamps: bool = ...,
    follow: Literal[False] = ...,
) -> str: ...


@overload
def read_logs(
    client: Client,
    namespace: str,
    pod: str,
    *,
    container: str | None = ...,
    tail: int | None = ...,
    since: float | None = ...,
    timestamps: bool = ...,
    follow: Literal[True],
) -> Iterator[str]: ...


@overload
def read_logs(
    client: Client,
    namespace: str,
    pod: str,
    *,
    container: str | None = ...,
    tail: int | None = ...,
    since: float | None = ...,
    timestamps: bool = ...,
    follow: bool,
) -> str | Iterator[str]: ...


def read_logs(
    client: Client,
    namespace: str,
    pod: str,
    *,
    container: str | None = None,
    tail: int | None = None,
    since: float | None = None,
    timestamps: bool = False,
    follow: bool = False,
) -> str | Iterator[str]:
    """A container's log as text: all of it, the last `tail` lines, or the lines of the last
    `since` seconds. `container` may be left out when the pod has one container (the server
    answers 400 otherwise, naming them). `follow=True` is `follow_logs(...)`."""
    if follow:
        return follow_logs(
            client, namespace, pod, container=container, tail=tail, since=since,
            timestamps=timestamps,
        )  # fmt: skip
    _check(tail, container, since)
    response = _open_log(
        client, namespace, pod, False, container=container, tail_lines=tail,
        since_seconds=_seconds(since), timestamps=timestamps,
    )  # fmt: skip
    return response.data.decode("utf-8", "replace")


def _seconds(since: float | None) -> int | None:
    """`sinceSeconds` is whole seconds: round up, so no line of the period is left out."""
    return None if since is None else max(1, math.ceil(since))


def _waiting(error: ApiError) -> bool:
    """The kubelet's answer for a container that has not started yet."""
    return error.code == 400 and (
        "is waiting to start" in error.message or "ContainerCreating" in error.message
    )


def _split_stamp(line: str) -> tuple[str, str]:
    stamp, sep, text = line.partition(" ")
    return (stamp, text) if sep else ("", line)


def _stamp_key(stamp: str) -> tuple[str, int]:
    """Sortable form of an RFC 3339 timestamp: the seconds part, then nanoseconds."""
    main, _, rest = stamp.rstrip("Z").partition(".")
    digits = "".join(c for c in rest if c.isdigit())
    return main, int((digits + "0" * 9)[:9]) if digits else 0


def _container_done(pod: Pod, container: str | None) -> bool:
    status = pod.status
    if status is None:
        return False
    if status.phase in FINISHED_PHASES:
        return True
    entries = [*(status.container_statuses or ()), *(status.init_container_statuses or ())]
    named = [e for e in entries if container is None or e.name == container]
    return bool(named) and all(e.state is not None and e.state.terminated for e in named)


def follow_logs(
    client: Client,
    namespace: str,
    pod: str,
    *,
    container: str | None = None,
    tail: int | None = None,
    since: float | None = None,
    timestamps: bool = False,
    poll: float = 1.0,
) -> Iterator[str]:
    """Lines of a container's log (without the newline) as they are written, starting with the
    last `tail` lines (all when None), until the container or pod finishes or the pod is
    deleted. A container that has not started is waited for (checked every `poll` seconds);
    dropped connections are resumed without repeating lines (see the module notes). With
    `timestamps=True` each line starts with the node's RFC 3339 timestamp and a space.
    `since` starts with the lines of the last `since` seconds instead."""
    _check(tail, container, since)
    if poll <= 0:
        raise ValueError(f"poll must be a positive number of seconds; got {poll!r}")
    return _follow(client, namespace, pod, container, tail, _seconds(since), timestamps, poll)


def _follow(
    client: Client,
    namespace: str,
    pod: str,
    container: str | None,
    tail: int | None,
    since_first: int | None,
    timestamps: bool,
    poll: float,
) -> Iterator[str]:
    import urllib3

    retry = client.retry
    last: tuple[str, int] | None = None  # newest timestamp seen
    same = 0  # lines seen carrying exactly that timestamp
    received = 0.0  # monotonic time the newest line arrived
    failures = 0
    operation = Operation("get", "pods/log", pod, namespace)
    while True:
        since = since_first
        if last is not None:
            since = max(1, math.ceil(time.monotonic() - received) + RESUME_MARGIN)
        try:
            response = _open_log(
                client,
                namespace,
                pod,
                True,
                container=container,
                tail_lines=tail if last is None else None,
                since_seconds=since,
                timestamps=True,
            )
        except NotFound:
            return
        except ApiError as error:
            if not _waiting(error):
                raise
            if _pod_done(client, namespace, pod, container):
                return
            time.sleep(poll)
            continue
        skip = same
        buffer = bytearray()
        complete = False
        try:
            chunks = response.chunks()
            while not complete:
                chunk = next(chunks, None)
                if chunk is None:  # the stream ended: a last line may lack its newline
                    complete = True
                    chunk = b"\n" if buffer else b""
                buffer += chunk
                if b"\n" not in chunk:  # only the new bytes are looked at: linear time
                    if len(buffer) > response.limits.max_body_bytes:
                        raise TooLarge(
                            "a log line", response.limits.max_body_bytes, "max_body_bytes"
                        )
                    continue
                *lines, rest = bytes(buffer).split(b"\n")
                buffer = bytearray(rest)
                for raw in lines:
                    stamp, text = _split_stamp(raw.decode("utf-8", "replace"))
                    key = _stamp_key(stamp)
                    if last is not None and key < last:
                        continue
                    if last is not None and key == last and skip > 0:
                        skip -= 1
                        continue
                    same = same + 1 if key == last else 1
                    last, received, failures, skip = key, time.monotonic(), 0, 0
                    yield f"{stamp} {text}" if timestamps else text
        except (TooLarge, UnsupportedEncoding) as exc:
            reason = "ResponseTooLarge" if isinstance(exc, TooLarge) else "BadResponse"
            raise unavailable(operation, reason, str(exc)) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            failures += 1
            if failures >= retry.attempts:
                raise unavailable(operation, type(exc).__name__, describe(exc)) from None
            retry.wait(failures)
            continue
        finally:
            if not complete:  # abandoned or broken: never hand the connection back half-read
                response.raw.close()
            response.raw.release_conn()
        if _pod_done(client, namespace, pod, container):
            return


def _pod_done(client: Client, namespace: str, pod: str, container: str | None) -> bool:
    try:
        found = client.get(_pod_model(), pod, namespace=namespace)
    except NotFound:
        return True
    return _container_done(found, container)
