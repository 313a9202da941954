"""The pods an operator runs for a job, and their logs.

Jobs are custom resources, but their output lives in pods that KubeRay, JobSet or the training
operator create and label. This module finds those pods by label and reads or follows their
logs through the official `CoreV1Api` on the client's own connection, with failures raised as
flarekit's `ApiError` classes (the same mapping and retry policy as the typed client).

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

import json
import math
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from flarekit._errors import ApiError, NotFound, Operation, error_from_response, unavailable
from flarekit._resource import selector
from flarekit._retry import RETRY_STATUSES
from flarekit._transport import _describe

if TYPE_CHECKING:
    from flarekit._client import Client

__all__ = ["PodInfo", "follow_logs", "list_pods", "read_logs"]

T = TypeVar("T")

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
    `default_container` the one `kubectl logs` would pick. `metadata` is the pod's metadata
    as the API returned it.
    """

    name: str
    namespace: str
    phase: str
    containers: tuple[str, ...]
    init_containers: tuple[str, ...] = ()
    role: str | None = None
    index: int | None = None
    node_name: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def labels(self) -> dict[str, str]:
        return dict(self.metadata.get("labels") or {})

    @property
    def created(self) -> str:
        return str(self.metadata.get("creationTimestamp") or "")

    @property
    def finished(self) -> bool:
        return self.phase in FINISHED_PHASES

    @property
    def default_container(self) -> str | None:
        annotated = (self.metadata.get("annotations") or {}).get(DEFAULT_CONTAINER_ANNOTATION)
        if annotated in self.containers:
            return str(annotated)
        return self.containers[0] if self.containers else None

    @classmethod
    def from_dict(cls, pod: Mapping[str, Any]) -> PodInfo:
        """Read a pod object (as JSON) that may lack any field, status in particular."""
        meta = dict(pod.get("metadata") or {})
        spec = pod.get("spec") or {}
        labels = meta.get("labels") or {}
        role = next((str(labels[k]) for k in ROLE_LABELS if labels.get(k)), None)
        index = None
        for key in INDEX_LABELS:
            raw = str(labels.get(key, ""))
            if raw.isdigit():
                index = int(raw)
                break
        return cls(
            name=str(meta.get("name") or ""),
            namespace=str(meta.get("namespace") or ""),
            phase=str((pod.get("status") or {}).get("phase") or "Pending"),
            containers=tuple(str(c.get("name")) for c in spec.get("containers") or []),
            init_containers=tuple(str(c.get("name")) for c in spec.get("initContainers") or []),
            role=role,
            index=index,
            node_name=spec.get("nodeName") or None,
            metadata=meta,
        )


# -- requests ---------------------------------------------------------------------------------


def _core(client: Client) -> Any:
    from kubernetes import client as k8s

    return k8s.CoreV1Api(client.api_client)


def _call(client: Client, operation: Operation, send: Callable[[], T]) -> T:
    """Run one CoreV1Api call, retrying 429/503 and lost connections as the typed client does,
    and raise failures as flarekit's `ApiError` classes."""
    import urllib3
    from kubernetes.client.exceptions import ApiException

    retry = client._transport.retry
    attempt = 0
    while True:
        attempt += 1
        try:
            return send()
        except ApiException as exc:
            if not exc.status:  # the client reports TLS failures as status 0
                raise unavailable(operation, "SSLError", str(exc.reason)) from None
            body = exc.body.encode() if isinstance(exc.body, str) else (exc.body or b"")
            headers = exc.headers or {}
            error = error_from_response(operation, exc.status, body, headers.get("Retry-After"))
            if exc.status in RETRY_STATUSES and attempt < retry.attempts:
                retry.wait(attempt, error.retry_after)
                continue
            raise error from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            if attempt < retry.attempts:
                retry.wait(attempt)
                continue
            raise unavailable(operation, type(exc).__name__, _describe(exc)) from None


def _timeout(client: Client) -> float:
    return float(client._transport.timeout)


def list_pods(
    client: Client, namespace: str, label_selector: str | Mapping[str, str]
) -> list[PodInfo]:
    """The pods in `namespace` matching `label_selector` (`"a=b,c in (d,e)"` or `{label:
    value}`), ordered by role, index and name."""
    labels = selector(label_selector, "label_selector")
    operation = Operation("list", "pods", namespace=namespace)
    api = _core(client)
    found: list[PodInfo] = []
    token = ""
    while True:
        response = _call(client, operation, _pod_page(client, api, namespace, labels, token))
        page = json.loads(response.data)
        found.extend(PodInfo.from_dict(item) for item in page.get("items") or [])
        token = (page.get("metadata") or {}).get("continue") or ""
        if not token:
            break
    return sorted(found, key=lambda p: (p.role or "", -1 if p.index is None else p.index, p.name))


def _pod_page(
    client: Client, api: Any, namespace: str, labels: str | None, token: str
) -> Callable[[], Any]:
    extra = {"_continue": token} if token else {}
    return lambda: api.list_namespaced_pod(
        namespace,
        label_selector=labels,
        limit=500,
        _preload_content=False,
        _request_timeout=_timeout(client),
        **extra,
    )


def get_pod(client: Client, namespace: str, pod: str) -> PodInfo:
    """One pod by name (`NotFound` if it is not there)."""
    api = _core(client)
    response = _call(
        client,
        Operation("get", "pods", pod, namespace),
        lambda: api.read_namespaced_pod(
            pod, namespace, _preload_content=False, _request_timeout=_timeout(client)
        ),
    )
    return PodInfo.from_dict(json.loads(response.data))


def _check(tail: int | None, container: str | None) -> None:
    if tail is not None and (isinstance(tail, bool) or not isinstance(tail, int) or tail < 0):
        raise ValueError(f"tail must be a whole number of lines >= 0 or None; got {tail!r}")
    if container is not None and (not isinstance(container, str) or not container):
        raise ValueError(f"container must be a container name or None; got {container!r}")


def _open_log(client: Client, namespace: str, pod: str, follow: bool, **options: Any) -> Any:
    """The urllib3 response of a log request (streaming when `follow`)."""
    api = _core(client)
    timeout: Any = (min(_timeout(client), 30.0), None) if follow else _timeout(client)
    kwargs = {k: v for k, v in options.items() if v is not None}
    return _call(
        client,
        Operation("get", "pods/log", pod, namespace),
        lambda: api.read_namespaced_pod_log(
            pod,
            namespace,
            follow=follow,
            _preload_content=False,
            _request_timeout=timeout,
            **kwargs,
        ),
    )


@overload
def read_logs(
    client: Client,
    namespace: str,
    pod: str,
    *,
    container: str | None = ...,
    tail: int | None = ...,
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
    timestamps: bool = False,
    follow: bool = False,
) -> str | Iterator[str]:
    """A container's log as text: all of it or the last `tail` lines. `container` may be left
    out when the pod has one container (the server answers 400 otherwise, naming them).
    `follow=True` is `follow_logs(...)`."""
    if follow:
        return follow_logs(
            client, namespace, pod, container=container, tail=tail, timestamps=timestamps
        )
    _check(tail, container)
    response = _open_log(
        client, namespace, pod, False, container=container, tail_lines=tail, timestamps=timestamps
    )
    data: bytes = response.data
    return data.decode("utf-8", "replace")


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


def _container_done(info: Mapping[str, Any], container: str | None) -> bool:
    status = info.get("status") or {}
    if status.get("phase") in FINISHED_PHASES:
        return True
    entries = [
        *(status.get("containerStatuses") or []),
        *(status.get("initContainerStatuses") or []),
    ]
    named = [e for e in entries if container is None or e.get("name") == container]
    return bool(named) and all("terminated" in (e.get("state") or {}) for e in named)


def follow_logs(
    client: Client,
    namespace: str,
    pod: str,
    *,
    container: str | None = None,
    tail: int | None = None,
    timestamps: bool = False,
    poll: float = 1.0,
) -> Iterator[str]:
    """Lines of a container's log (without the newline) as they are written, starting with the
    last `tail` lines (all when None), until the container or pod finishes or the pod is
    deleted. A container that has not started is waited for (checked every `poll` seconds);
    dropped connections are resumed without repeating lines (see the module notes). With
    `timestamps=True` each line starts with the node's RFC 3339 timestamp and a space."""
    _check(tail, container)
    if poll <= 0:
        raise ValueError(f"poll must be a positive number of seconds; got {poll!r}")
    return _follow(client, namespace, pod, container, tail, timestamps, poll)


def _follow(
    client: Client,
    namespace: str,
    pod: str,
    container: str | None,
    tail: int | None,
    timestamps: bool,
    poll: float,
) -> Iterator[str]:
    import urllib3

    retry = client._transport.retry
    last: tuple[str, int] | None = None  # newest timestamp seen
    same = 0  # lines seen carrying exactly that timestamp
    received = 0.0  # monotonic time the newest line arrived
    failures = 0
    operation = Operation("get", "pods/log", pod, namespace)
    while True:
        since = None
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
        buffer = b""
        complete = False
        try:
            chunks = response.stream(64 * 1024, decode_content=True)
            while not complete:
                chunk = next(chunks, None)
                if chunk is None:  # the stream ended: a last line may lack its newline
                    complete = True
                    chunk = b"\n" if buffer else b""
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
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
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            failures += 1
            if failures >= retry.attempts:
                raise unavailable(operation, type(exc).__name__, _describe(exc)) from None
            retry.wait(failures)
            continue
        finally:
            if not complete:  # abandoned or broken: never hand the connection back half-read
                response.close()
            response.release_conn()
        if _pod_done(client, namespace, pod, container):
            return


def _pod_done(client: Client, namespace: str, pod: str, container: str | None) -> bool:
    api = _core(client)
    try:
        response = _call(
            client,
            Operation("get", "pods", pod, namespace),
            lambda: api.read_namespaced_pod(
                pod, namespace, _preload_content=False, _request_timeout=_timeout(client)
            ),
        )
    except NotFound:
        return True
    return _container_done(json.loads(response.data), container)
