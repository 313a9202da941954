"""LocalQueue between Kueue v1beta1 and v1beta2.

``status.flavorUsage`` is ``status.flavorsUsage`` in v1beta2. v1beta1's deprecated
``status.flavors`` (dropped from v1beta2) is refused by name; ``spec`` (including
``stopPolicy`` and ``fairSharing``) is the same in both.
"""

from __future__ import annotations

from flarekit.compat._reshape import Reshape
from flarekit_models.kueue import v1beta1, v1beta2

__all__ = ["localqueue_v1beta1_to_v1beta2", "localqueue_v1beta2_to_v1beta1"]

localqueue_v1beta1_to_v1beta2 = Reshape(
    v1beta1.LocalQueue, v1beta2.LocalQueue, moves=(("status.flavorUsage", "status.flavorsUsage"),)
)
localqueue_v1beta2_to_v1beta1 = Reshape(
    v1beta2.LocalQueue, v1beta1.LocalQueue, moves=(("status.flavorsUsage", "status.flavorUsage"),)
)
