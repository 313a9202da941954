"""Checks of a cluster's configuration that need the server, run by ``apply()`` before any
write: what a valid configuration can still get wrong on this particular cluster.

Why: some mistakes only show once the cluster is created, as a cluster that never starts.

- **Autoscaling under Kueue.** Kueue admits a RayCluster with the resources it asks for when
  it is created; an autoscaling one (the Ray autoscaler changes worker counts by itself) then
  stays suspended, unless Kueue's elastic-jobs support is switched on and the RayCluster is
  marked elastic, which flarekit does not do. codeflare-sdk refuses the combination too. The
  error names the LocalQueue (the one asked for, or the namespace's default) and the Kueue
  release the server runs.
- **The priority class must exist.** Kueue leaves a Workload whose WorkloadPriorityClass
  does not exist pending forever. A user who may not read WorkloadPriorityClasses (they are
  cluster-scoped) is not blocked: Kueue decides then.

Each raises :class:`~flarekit._validation.ConfigError` naming the parameter, the value and
what would be accepted; nothing has been written at that point.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import flarekit.compat
import flarekit.kueue
from flarekit._objects import labels_of, name_of
from flarekit._products import PRIORITY_LABEL, QUEUE_LABEL
from flarekit._validation import ConfigError, Problem
from flarekit.client import Forbidden, NotFound, NotServed
from flarekit.cluster._status import owning_appwrapper
from flarekit_models.ray import v1 as ray_v1

if TYPE_CHECKING:
    from flarekit.client import Client
    from flarekit.cluster._config import ClusterConfiguration
    from flarekit_models import KubeResource

__all__ = [
    "LabelsDropped",
    "check_not_taken",
    "check_priority_class",
    "check_queue_labels_kept",
    "refuse_autoscaling_under_kueue",
]


class LabelsDropped(RuntimeError):
    """The server stored the cluster without its Kueue labels, so it would not be queued."""


_AUTOSCALING_UNDER_KUEUE = (
    "Kueue admits a RayCluster at the size it asks for; an autoscaling one would stay "
    "suspended (flarekit does not set up Kueue's elastic jobs)"
)


def _kueue_release(client: Client) -> str:
    try:
        return f"Kueue {flarekit.compat.family_release(client, 'kueue').release_text()}"
    except Exception:  # the release only words the message; never the reason to fail
        return "Kueue"


def refuse_autoscaling_under_kueue(
    client: Client, config: ClusterConfiguration, queue: str | None
) -> None:
    """`ConfigError` when the cluster autoscales and would be queued by Kueue (`queue`)."""
    if not config.enable_autoscaling or not queue:
        return
    how = "asked for" if config.local_queue else "the namespace's default"
    raise ConfigError(
        [
            Problem(
                "enable_autoscaling",
                True,
                f"the cluster would be queued in LocalQueue {queue!r} ({how}) by "
                f"{_kueue_release(client)}: {_AUTOSCALING_UNDER_KUEUE}",
                "enable_autoscaling=False with a fixed num_workers, or a namespace "
                "without Kueue queues",
            )
        ]
    )


def check_priority_class(client: Client, config: ClusterConfiguration) -> None:
    """`ConfigError` when ``priority_class`` names no WorkloadPriorityClass on the server."""
    name = config.priority_class
    if not name:
        return

    try:
        kind = flarekit.kueue.kueue_model(client, "WorkloadPriorityClass")
        client.get(kind, name)
        return
    except (Forbidden, NotServed):
        return  # may not read them, or no Kueue: nothing to check against
    except NotFound:
        pass
    try:
        names = sorted(str(c.metadata.name) for c in client.list(kind) if c.metadata is not None)
    except Forbidden:
        names = []
    expected = (
        f"one of the WorkloadPriorityClasses: {', '.join(names)}"
        if names
        else "an existing WorkloadPriorityClass (the cluster has none; an admin creates them)"
    )
    raise ConfigError(
        [Problem("priority_class", name, f"no WorkloadPriorityClass {name!r}", expected)]
    )


def check_not_taken(client: Client, config: ClusterConfiguration) -> None:
    """Refuse to wrap a standalone RayCluster, or to replace a wrapped one by a bare one
    (one read of the RayCluster of that name)."""
    try:
        stored = client.get(ray_v1.RayCluster, config.name, namespace=config.namespace)
    except NotFound:
        return
    owner = owning_appwrapper(stored)
    where = f"{config.namespace}/{config.name}"
    if config.appwrapper and owner is None:
        problem = Problem(
            "appwrapper",
            True,
            f"RayCluster {where} already exists outside an AppWrapper",
            "appwrapper=False to update it, another name, or down() it first",
        )
    elif not config.appwrapper and owner is not None:
        problem = Problem(
            "appwrapper",
            False,
            f"RayCluster {where} belongs to AppWrapper {owner!r}",
            f"appwrapper=True to update it through AppWrapper {owner!r}",
        )
    else:
        return
    raise ConfigError([problem])


def check_queue_labels_kept(
    stored: KubeResource, config: ClusterConfiguration, existed: bool
) -> None:
    """Refuse a cluster the server stored without its Kueue labels (an admission webhook may
    remove them): it would run outside the queue. `existed`: it was there before the write
    (then it is left in place; else the write's plan deletes it again)."""
    labels = labels_of(stored)
    wanted = {QUEUE_LABEL: config.local_queue, PRIORITY_LABEL: config.priority_class}
    missing = {k: v for k, v in wanted.items() if v and labels.get(k) != v}
    if not missing:
        return
    what = ", ".join(f"{k}={v}" for k, v in missing.items())
    kind = type(stored).__name__
    fate = "it existed before, so it was left in place" if existed else "it was deleted again"
    raise LabelsDropped(
        f"the server stored {kind} {config.namespace}/{name_of(stored)} without the "
        f"label(s) {what} (an admission webhook may remove them), so it would run outside "
        f"the queue; {fate}"
    )
