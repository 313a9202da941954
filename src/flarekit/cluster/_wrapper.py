"""Which AppWrapper a cluster runs, and what that means for a Ray cluster wrapped in one.

Why: two controllers own the ``workload.codeflare.dev`` group. The AppWrapper controller
(v1beta2) leaves queueing to Kueue: Kueue admits the AppWrapper by its
``kueue.x-k8s.io/queue-name`` label and unsuspends it. The legacy multi-cluster-app-dispatcher
(MCAD, v1.40 and earlier, ``v1beta1``) is a queue of its own: it decides when to dispatch an
AppWrapper (``status.state`` ``Pending`` -> ``Running``) and Kueue does not queue v1beta1
AppWrappers at all. So on an MCAD cluster:

* a cluster is written (`flarekit.compat.prepare_write` converts it to v1beta1) and read in
  v1beta1, the version the server serves: reading it as v1beta2 would find nothing, and
  converting it to v1beta2 would refuse its status (the two report progress differently), so
  the v1beta1 object is read as it is and its status mapped by `flarekit.cluster._status`;
* ``local_queue`` and ``priority_class`` are refused before anything is created: they
  become Kueue labels, which nothing on that cluster would act on, and a setting silently
  ignored is worse than an error. Without them MCAD queues the AppWrapper itself (and
  ``appwrapper=False`` queues the RayCluster through Kueue, where Kueue is installed).

Which version the server serves comes from `flarekit.compat` negotiation, cached per client.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import flarekit.client
import flarekit.compat
import flarekit_models
from flarekit._json import JsonObject, JsonValue
from flarekit._validation import ConfigError, Problem

if TYPE_CHECKING:
    from flarekit.client import Client
    from flarekit.cluster._config import ClusterConfiguration
    from flarekit_models import KubeResource

__all__ = [
    "APPWRAPPER_V1BETA2",
    "MCAD_APPWRAPPER",
    "appwrapper_kind",
    "appwrapper_version",
    "is_mcad",
    "refuse_kueue_options",
    "wrapped_templates",
]

APPWRAPPER_V1BETA2 = "workload.codeflare.dev/v1beta2"
#: MCAD's AppWrapper apiVersion.
MCAD_APPWRAPPER = "workload.codeflare.dev/v1beta1"


def appwrapper_version(client: Client) -> str:
    """The AppWrapper apiVersion to read and write on `client`'s cluster: v1beta2 unless the
    server serves AppWrapper only in MCAD's v1beta1 (v1beta2 when neither is served)."""
    return flarekit.compat.write_version(client, APPWRAPPER_V1BETA2, "AppWrapper")


def appwrapper_kind(client: Client) -> type[KubeResource]:
    """The AppWrapper model class of `appwrapper_version`."""
    return flarekit_models.resource_model(appwrapper_version(client), "AppWrapper")


def is_mcad(obj: Mapping[str, JsonValue] | str | None) -> bool:
    """True for MCAD's apiVersion, or an object (JSON) of it."""
    if isinstance(obj, Mapping):
        obj = flarekit.client.head_of(obj).api_version
    return obj == MCAD_APPWRAPPER


def refuse_kueue_options(client: Client, config: ClusterConfiguration) -> None:
    """Raise `ConfigError` when `config` asks for Kueue queueing of an MCAD AppWrapper
    (``local_queue``, ``priority_class``), naming the MCAD release and why."""
    asked = [
        (name, value)
        for name, value in (
            ("local_queue", config.local_queue),
            ("priority_class", config.priority_class),
        )
        if value
    ]
    if not asked:
        return
    release = flarekit.compat.family_release(client, "appwrapper-mcad").release_text()
    why = (
        f"this cluster runs the legacy MCAD AppWrapper ({MCAD_APPWRAPPER}, MCAD release "
        f"{release}), which Kueue does not queue: MCAD dispatches v1beta1 AppWrappers itself, "
        "so the Kueue label would be ignored"
    )
    expected = (
        "no {} (MCAD queues the AppWrapper), or appwrapper=False to queue the RayCluster "
        "through Kueue"
    )
    raise ConfigError([Problem(name, value, why, expected.format(name)) for name, value in asked])


def wrapped_templates(wrapper: Mapping[str, JsonValue]) -> list[JsonObject]:
    """The objects an AppWrapper holds, in order, as stored (not copies): v1beta2's
    ``spec.components[].template`` or MCAD's ``spec.resources.GenericItems[].generictemplate``."""
    return [
        template
        for _, template in flarekit.client.wrapped_templates(wrapper)
        if isinstance(template, dict)
    ]
