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

from flarekit._validation import ConfigError, Problem
from flarekit.client._errors import Forbidden, NotFound
from flarekit.client._served import NotServed

if TYPE_CHECKING:
    from flarekit.client._client import Client
    from flarekit.cluster._config import ClusterConfiguration

__all__ = ["check_priority_class", "refuse_autoscaling_under_kueue"]

_AUTOSCALING_UNDER_KUEUE = (
    "Kueue admits a RayCluster at the size it asks for; an autoscaling one would stay "
    "suspended (flarekit does not set up Kueue's elastic jobs)"
)


def _kueue_release(client: Client) -> str:
    try:
        from flarekit.compat import family_release

        return f"Kueue {family_release(client, 'kueue').release_text()}"
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
    from flarekit.kueue._models import kueue_model

    try:
        kind = kueue_model(client, "WorkloadPriorityClass")
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
