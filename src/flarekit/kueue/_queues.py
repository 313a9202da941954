"""Which LocalQueue a job goes to, and the labels that send it there.

Why: a job without Kueue's queue label is not queued at all, and a label naming a LocalQueue
that does not exist leaves the job suspended forever. So the queue is checked before anything
is created: a named LocalQueue must exist in the job's namespace; with no name, the
namespace's default LocalQueue is used (Kueue's convention, a LocalQueue named ``default``,
or one annotated ``kueue.x-k8s.io/default-queue: "true"`` as the CodeFlare SDK marks it);
otherwise the error lists the LocalQueues that do exist. A label is never dropped silently.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from flarekit._validation import (
    ConfigError,
    Problem,
    ValidationReport,
    check_dns1123_subdomain,
    check_label_value,
)
from flarekit.client import Forbidden, NotFound, NotServed
from flarekit.kueue._models import PRIORITY_LABEL, QUEUE_LABEL, kueue_model

if TYPE_CHECKING:
    from flarekit.client import Client

__all__ = [
    "DEFAULT_QUEUE_ANNOTATION",
    "DEFAULT_QUEUE_NAME",
    "QueueNotFound",
    "QueueOptOutWarning",
    "check_no_queue",
    "check_queue_labels",
    "check_queue_name",
    "chosen_priority",
    "chosen_queue",
    "local_queue_names",
    "maybe_local_queue",
    "opt_out_of_queue",
    "queue_labels",
    "resolve_local_queue",
]

#: The LocalQueue Kueue's LocalQueueDefaulting gives jobs that name none.
DEFAULT_QUEUE_NAME = "default"
#: The annotation the CodeFlare SDK reads to find a namespace's default LocalQueue.
DEFAULT_QUEUE_ANNOTATION = "kueue.x-k8s.io/default-queue"

_CREATE_HINT = "a cluster admin can create one with flarekit.kueue.apply_local_queue(...)"


class QueueNotFound(ConfigError):
    """The LocalQueue asked for (or a default one) does not exist in the namespace."""


class QueueOptOutWarning(UserWarning):
    """A job or cluster asked for no queue (``no_queue=True``) on a cluster that runs Kueue,
    which may still queue it, or hold it."""


def check_no_queue(
    report: ValidationReport,
    no_queue: object,
    local_queue: object = None,
    priority_class: object = None,
) -> None:
    """``no_queue`` is a bool, and True only without a queue or a priority class."""
    if not isinstance(no_queue, bool):
        report.add("no_queue", no_queue, "expected True or False", "a bool")
        return
    if not no_queue:
        return
    for field, value in (("local_queue", local_queue), ("priority_class", priority_class)):
        if value is not None:
            report.add(field, value, "given with no_queue=True", f"{field}=None, or no_queue=False")


def opt_out_of_queue(client: Client, namespace: str, subject: str) -> None:
    """What ``no_queue=True`` does before a create: nothing on a cluster without Kueue;
    where Kueue is installed, a `QueueOptOutWarning` saying how Kueue may still manage the
    object made without a queue label (reads: discovery, and the namespace's LocalQueues
    where this user may list them)."""
    try:
        queues: list[str] | None = local_queue_names(client, namespace)
    except NotServed:
        return
    except Forbidden:
        queues = None
    text = (
        f"{subject} is created without a Kueue queue (no_queue=True), but Kueue is installed: "
        "it runs outside every ClusterQueue's quota unless Kueue manages jobs without a queue "
        "name (manageJobsWithoutQueueName, which keeps it suspended and never admits it)"
    )
    if queues is not None and DEFAULT_QUEUE_NAME in queues:
        text += (
            f", and with Kueue's LocalQueueDefaulting the namespace's LocalQueue "
            f"{DEFAULT_QUEUE_NAME!r} takes it anyway"
        )
    warnings.warn(QueueOptOutWarning(text), stacklevel=3)


def check_queue_name(report: ValidationReport, field: str, value: object) -> bool:
    """A LocalQueue or WorkloadPriorityClass name that can travel in a label value."""
    return check_dns1123_subdomain(report, field, value) and check_label_value(report, field, value)


def local_queue_names(client: Client, namespace: str) -> list[str]:
    """The LocalQueues in `namespace`, sorted (raises `NotServed` without Kueue)."""
    return sorted(name for name, _ in _local_queues(client, namespace))


def _local_queues(client: Client, namespace: str) -> list[tuple[str, dict[str, str]]]:
    kind = kueue_model(client, "LocalQueue")
    out = []
    for queue in client.list(kind, namespace=namespace):
        meta = queue.metadata
        if meta is not None and meta.name:
            out.append((str(meta.name), dict(meta.annotations or {})))
    return out


def _listed(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names)


def _named_queue(client: Client, namespace: str, local_queue: str, field: str) -> str:
    """`local_queue` if it exists (one GET, which users may do where they may not list)."""
    kind = kueue_model(client, "LocalQueue")
    try:
        client.get(kind, local_queue, namespace=namespace)
        return local_queue
    except NotFound:
        pass
    try:
        names: list[str] | None = local_queue_names(client, namespace)
    except Forbidden:
        names = None
    if names is None:
        expected = f"the name of a LocalQueue in namespace {namespace!r}"
    elif names:
        expected = f"one of the LocalQueues in namespace {namespace!r}: {_listed(names)}"
    else:
        expected = f"an existing LocalQueue, but namespace {namespace!r} has none ({_CREATE_HINT})"
    message = f"no LocalQueue {local_queue!r} in namespace {namespace!r}"
    raise QueueNotFound([Problem(field, local_queue, message, expected)])


def resolve_local_queue(
    client: Client,
    namespace: str,
    local_queue: str | None = None,
    *,
    field: str = "local_queue",
) -> str:
    """The LocalQueue a job in `namespace` goes to: `local_queue` if it exists there, else
    the namespace's default LocalQueue.

    Raises `QueueNotFound` (a `ConfigError` naming `field`) listing the LocalQueues that
    exist, and `NotServed` when Kueue is not installed. Only reads: discovery, then a GET of
    the named queue (and a list when it is missing), or a list to find the default.
    """
    if local_queue is not None:
        report = ValidationReport()
        check_queue_name(report, field, local_queue)
        report.raise_if_problems()
        return _named_queue(client, namespace, local_queue, field)
    queues = _local_queues(client, namespace)
    names = sorted(name for name, _ in queues)
    marked = sorted(
        name
        for name, annotations in queues
        if str(annotations.get(DEFAULT_QUEUE_ANNOTATION, "")).lower() == "true"
    )
    if len(marked) == 1:
        return marked[0]
    if not marked and DEFAULT_QUEUE_NAME in names:
        return DEFAULT_QUEUE_NAME
    if marked:
        message = (
            f"no {field} given and several LocalQueues in namespace {namespace!r} are marked "
            f"as default ({DEFAULT_QUEUE_ANNOTATION}): {_listed(marked)}"
        )
        expected = f"{field} set to one of {_listed(marked)}"
    elif names:
        message = (
            f"no {field} given and namespace {namespace!r} has no default LocalQueue (one "
            f'named {DEFAULT_QUEUE_NAME!r} or annotated {DEFAULT_QUEUE_ANNOTATION}: "true")'
        )
        expected = f"{field} set to one of {_listed(names)}"
    else:
        message = f"no {field} given and namespace {namespace!r} has no LocalQueues"
        expected = f"a LocalQueue in namespace {namespace!r} ({_CREATE_HINT})"
    raise QueueNotFound([Problem(field, None, message, expected)])


def maybe_local_queue(
    client: Client,
    namespace: str,
    local_queue: str | None = None,
    *,
    field: str = "local_queue",
) -> str | None:
    """Like `resolve_local_queue`, but None (no queueing) when Kueue is not installed and no
    queue was asked for; a named queue on a cluster without Kueue is still an error."""
    try:
        return resolve_local_queue(client, namespace, local_queue, field=field)
    except NotServed:
        if local_queue is None:
            return None
        raise


def check_queue_labels(
    report: ValidationReport,
    labels: object,
    local_queue: object,
    priority_class: object = None,
    *,
    label_field: str = "labels",
) -> None:
    """Kueue's labels given among a job's `labels` are an explicit choice, as good as the
    option: each must agree with `local_queue` / `priority_class` when both are given (the
    error names both). The label is never replaced, by the option or by a default queue."""
    if not isinstance(labels, Mapping):
        return
    for field, label, value in (
        ("local_queue", QUEUE_LABEL, local_queue),
        ("priority_class", PRIORITY_LABEL, priority_class),
    ):
        given = labels.get(label)
        if given is not None and value is not None and given != value:
            report.add(
                f"{label_field}[{label!r}]",
                given,
                f"contradicts {field}={value!r}",
                f"the same value as {field}, or only one of the two",
            )


def chosen_queue(labels: Mapping[str, str], local_queue: str | None) -> str | None:
    """The LocalQueue asked for: `local_queue`, else Kueue's queue label among `labels`."""
    return local_queue if local_queue is not None else labels.get(QUEUE_LABEL)


def chosen_priority(labels: Mapping[str, str], priority_class: str | None) -> str | None:
    """The WorkloadPriorityClass asked for: `priority_class`, else Kueue's label."""
    return priority_class if priority_class is not None else labels.get(PRIORITY_LABEL)


def queue_labels(queue: str | None, priority_class: str | None = None) -> dict[str, str]:
    """The labels that put a job into LocalQueue `queue` with WorkloadPriorityClass
    `priority_class` (either may be None); bad names raise `ConfigError` naming the field."""
    report = ValidationReport()
    labels: dict[str, str] = {}
    if queue is not None:
        check_queue_name(report, "local_queue", queue)
        labels[QUEUE_LABEL] = queue
    if priority_class is not None:
        check_queue_name(report, "priority_class", priority_class)
        labels[PRIORITY_LABEL] = priority_class
    report.raise_if_problems()
    return labels
