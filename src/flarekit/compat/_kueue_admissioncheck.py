"""AdmissionCheck between Kueue v1beta1 and v1beta2.

v1beta2 removed ``spec.retryDelayMinutes``, which had no effect in any release that serves
v1beta2. The API server fills in its default (15) on every v1beta1 object, so that value is
dropped going to v1beta2; any other value was set on purpose and is refused.
"""

from __future__ import annotations

from typing import Any

from flarekit.compat._engine import Context
from flarekit.compat._kueue_versions import pair
from flarekit.compat._reshape import Reshape

__all__ = ["admissioncheck_v1beta1_to_v1beta2", "admissioncheck_v1beta2_to_v1beta1"]

_V1BETA1, _V1BETA2 = pair("AdmissionCheck")
_DEFAULT_RETRY_DELAY = 15


def _retry_delay(data: dict[str, Any], ctx: Context) -> None:
    spec = data.get("spec")
    if isinstance(spec, dict) and "retryDelayMinutes" in spec:
        if spec["retryDelayMinutes"] != _DEFAULT_RETRY_DELAY:
            ctx.refuse(
                "spec.retryDelayMinutes",
                f"v1beta2 has no such field (only the default, {_DEFAULT_RETRY_DELAY}, "
                "which had no effect, is dropped)",
            )
        del spec["retryDelayMinutes"]


admissioncheck_v1beta1_to_v1beta2 = Reshape(_V1BETA1, _V1BETA2, hooks=(_retry_delay,))
admissioncheck_v1beta2_to_v1beta1 = Reshape(_V1BETA2, _V1BETA1)
