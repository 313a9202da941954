"""The table of conversions, and :func:`convert`, which picks one by apiVersion and kind."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from flarekit._json import JsonValue
from flarekit.compat._appwrapper import (
    MCAD,
    V1BETA2,
    appwrapper_v1beta1_to_v1beta2,
    appwrapper_v1beta2_to_v1beta1,
)
from flarekit.compat._errors import NoConversion
from flarekit.compat._head import head_of
from flarekit.compat._kueue_admissioncheck import (
    admissioncheck_v1beta1_to_v1beta2,
    admissioncheck_v1beta2_to_v1beta1,
)
from flarekit.compat._kueue_clusterqueue import (
    clusterqueue_v1beta1_to_v1beta2,
    clusterqueue_v1beta2_to_v1beta1,
)
from flarekit.compat._kueue_localqueue import (
    localqueue_v1beta1_to_v1beta2,
    localqueue_v1beta2_to_v1beta1,
)
from flarekit.compat._kueue_multikueuecluster import (
    multikueuecluster_v1beta1_to_v1beta2,
    multikueuecluster_v1beta2_to_v1beta1,
)
from flarekit.compat._kueue_plain import plain_conversions
from flarekit.compat._kueue_workload import (
    workload_v1beta1_to_v1beta2,
    workload_v1beta2_to_v1beta1,
)
from flarekit.compat._pytorchjob_to_trainjob import pytorchjob_to_trainjob
from flarekit.compat._raycluster import raycluster_v1alpha1_to_v1
from flarekit.compat._torch_runtime import PYTORCH, TRAINJOB
from flarekit.compat._trainjob_to_pytorchjob import trainjob_to_pytorchjob
from flarekit_models import KubeModel, KubeResource, resource_model

__all__ = ["CONVERSIONS", "Conversion", "convert", "register"]

#: A conversion takes the object as its model or its JSON.
Conversion = Callable[[KubeModel | Mapping[str, JsonValue]], KubeResource]

#: (source apiVersion, source kind, target apiVersion) -> (target kind, conversion).
CONVERSIONS: dict[tuple[str, str, str], tuple[str, Conversion]] = {}


def register(source: tuple[str, str], target: tuple[str, str], conversion: Conversion) -> None:
    """Add a conversion from ``source`` to ``target`` ((apiVersion, kind) pairs)."""
    CONVERSIONS[(source[0], source[1], target[0])] = (target[1], conversion)


def convert(obj: KubeModel | Mapping[str, JsonValue], to_api_version: str) -> KubeResource:
    """``obj`` (a model or a JSON dict) as an object of ``to_api_version``.

    The object's own apiVersion and kind choose the conversion; converting to the version it
    already has returns it validated, unchanged. Raises :class:`NoConversion` for a pair with
    no conversion (listing those that exist for the object's kind) and
    :class:`~flarekit.compat.ConversionError` for a field the target cannot express.
    """
    head = head_of(obj)
    api_version, kind = head.api_version, head.kind
    if api_version is None or kind is None:
        raise ValueError("the object needs apiVersion and kind (strings) to choose a conversion")
    if api_version == to_api_version:
        data = obj.to_dict() if isinstance(obj, KubeModel) else obj
        return resource_model(api_version, kind).model_validate(data)
    found = CONVERSIONS.get((api_version, kind, to_api_version))
    if found is None:
        targets = sorted(
            f"{t} {k}" for (a, s, t), (k, _) in CONVERSIONS.items() if (a, s) == (api_version, kind)
        )
        known = "; ".join(targets) if targets else "none"
        raise NoConversion(
            f"no conversion from {api_version} {kind} to {to_api_version}; "
            f"from {api_version} {kind} there are: {known}"
        )
    return found[1](obj)


class _Pair(Protocol):
    """A conversion that knows its source and target (a :class:`Reshape`)."""

    @property
    def source(self) -> tuple[str, str]: ...

    @property
    def target(self) -> tuple[str, str]: ...

    def __call__(self, obj: KubeModel | Mapping[str, JsonValue], /) -> KubeResource: ...


def _register_reshapes(reshapes: list[_Pair]) -> None:
    for reshape in reshapes:
        register(reshape.source, reshape.target, reshape)


_register_reshapes(
    [
        admissioncheck_v1beta1_to_v1beta2,
        admissioncheck_v1beta2_to_v1beta1,
        clusterqueue_v1beta1_to_v1beta2,
        clusterqueue_v1beta2_to_v1beta1,
        localqueue_v1beta1_to_v1beta2,
        localqueue_v1beta2_to_v1beta1,
        multikueuecluster_v1beta1_to_v1beta2,
        multikueuecluster_v1beta2_to_v1beta1,
        workload_v1beta1_to_v1beta2,
        workload_v1beta2_to_v1beta1,
        *plain_conversions(),
        raycluster_v1alpha1_to_v1,
    ]
)
register(PYTORCH, TRAINJOB, pytorchjob_to_trainjob)
register(MCAD, V1BETA2, appwrapper_v1beta1_to_v1beta2)
register(V1BETA2, MCAD, appwrapper_v1beta2_to_v1beta1)
register(TRAINJOB, PYTORCH, trainjob_to_pytorchjob)
