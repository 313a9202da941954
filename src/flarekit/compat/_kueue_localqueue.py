"""LocalQueue between Kueue v1beta1 and v1beta2.

``status.flavorUsage`` is ``status.flavorsUsage`` in v1beta2. v1beta1's deprecated
``status.flavors`` (dropped from v1beta2) is refused by name; ``spec`` (including
``stopPolicy`` and ``fairSharing``) is the same in both.
"""

from __future__ import annotations

from flarekit.compat._kueue_versions import pair
from flarekit.compat._reshape import Reshape

__all__ = ["localqueue_v1beta1_to_v1beta2", "localqueue_v1beta2_to_v1beta1"]

_V1BETA1, _V1BETA2 = pair("LocalQueue")

localqueue_v1beta1_to_v1beta2 = Reshape(
    _V1BETA1, _V1BETA2, moves=(("status.flavorUsage", "status.flavorsUsage"),)
)
localqueue_v1beta2_to_v1beta1 = Reshape(
    _V1BETA2, _V1BETA1, moves=(("status.flavorsUsage", "status.flavorUsage"),)
)
