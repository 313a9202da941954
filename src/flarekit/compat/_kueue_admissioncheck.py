"""AdmissionCheck between Kueue v1beta1 and v1beta2.

v1beta2 removed ``spec.retryDelayMinutes``, which had no effect in any release that serves
v1beta2. The API server fills in its default (15) on every v1beta1 object, so that value is
dropped going to v1beta2; any other value was set on purpose and is refused.
"""

from __future__ import annotations

from flarekit.compat._engine import Context
from flarekit.compat._reshape import Reshape
from flarekit_models.kueue import v1beta1, v1beta2

__all__ = ["admissioncheck_v1beta1_to_v1beta2", "admissioncheck_v1beta2_to_v1beta1"]

_DEFAULT_RETRY_DELAY = 15


def _retry_delay(source: v1beta1.AdmissionCheck, ctx: Context) -> None:
    delay = source.spec.retry_delay_minutes if source.spec else None
    if delay is not None and delay != _DEFAULT_RETRY_DELAY:
        ctx.refuse(
            "spec.retryDelayMinutes",
            f"v1beta2 has no such field (only the default, {_DEFAULT_RETRY_DELAY}, "
            "which had no effect, is dropped)",
        )


admissioncheck_v1beta1_to_v1beta2 = Reshape(
    v1beta1.AdmissionCheck,
    v1beta2.AdmissionCheck,
    carried=("spec.retryDelayMinutes",),
    checks=(_retry_delay,),
)
admissioncheck_v1beta2_to_v1beta1 = Reshape(v1beta2.AdmissionCheck, v1beta1.AdmissionCheck)
