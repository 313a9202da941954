"""Conversions between API versions (and, for training jobs, kinds) that never drop a field.

Each pair is written out in its own module as plain functions from one model (or its JSON
dict) to the other; :func:`convert` picks one by the object's apiVersion and kind. A field
the target cannot express raises :class:`ConversionError` naming its path and both versions;
fields unknown to both versions (kept by the models) are carried where their parent exists.

Before a facade writes, `prepare_write` also evaluates the CEL rules of the CRD
(`rule_failures`, raising `RulesFailed`), as the API server does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from flarekit._lazy import lazy_module

if TYPE_CHECKING:
    from flarekit.compat._appwrapper import (
        appwrapper_v1beta1_to_v1beta2 as appwrapper_v1beta1_to_v1beta2,
    )
    from flarekit.compat._appwrapper import (
        appwrapper_v1beta2_to_v1beta1 as appwrapper_v1beta2_to_v1beta1,
    )
    from flarekit.compat._cel import RuleFailure as RuleFailure
    from flarekit.compat._cel import RulesFailed as RulesFailed
    from flarekit.compat._cel import rule_failures as rule_failures
    from flarekit.compat._errors import ConversionError as ConversionError
    from flarekit.compat._errors import NoConversion as NoConversion
    from flarekit.compat._fields import FieldUnavailable as FieldUnavailable
    from flarekit.compat._fields import MissingField as MissingField
    from flarekit.compat._fields import check_fields as check_fields
    from flarekit.compat._fields import missing_fields as missing_fields
    from flarekit.compat._kueue_admissioncheck import (
        admissioncheck_v1beta1_to_v1beta2 as admissioncheck_v1beta1_to_v1beta2,
    )
    from flarekit.compat._kueue_admissioncheck import (
        admissioncheck_v1beta2_to_v1beta1 as admissioncheck_v1beta2_to_v1beta1,
    )
    from flarekit.compat._kueue_clusterqueue import (
        clusterqueue_v1beta1_to_v1beta2 as clusterqueue_v1beta1_to_v1beta2,
    )
    from flarekit.compat._kueue_clusterqueue import (
        clusterqueue_v1beta2_to_v1beta1 as clusterqueue_v1beta2_to_v1beta1,
    )
    from flarekit.compat._kueue_localqueue import (
        localqueue_v1beta1_to_v1beta2 as localqueue_v1beta1_to_v1beta2,
    )
    from flarekit.compat._kueue_localqueue import (
        localqueue_v1beta2_to_v1beta1 as localqueue_v1beta2_to_v1beta1,
    )
    from flarekit.compat._kueue_multikueuecluster import (
        multikueuecluster_v1beta1_to_v1beta2 as multikueuecluster_v1beta1_to_v1beta2,
    )
    from flarekit.compat._kueue_multikueuecluster import (
        multikueuecluster_v1beta2_to_v1beta1 as multikueuecluster_v1beta2_to_v1beta1,
    )
    from flarekit.compat._kueue_workload import (
        workload_v1beta1_to_v1beta2 as workload_v1beta1_to_v1beta2,
    )
    from flarekit.compat._kueue_workload import (
        workload_v1beta2_to_v1beta1 as workload_v1beta2_to_v1beta1,
    )
    from flarekit.compat._negotiate import family_release as family_release
    from flarekit.compat._negotiate import negotiate as negotiate
    from flarekit.compat._negotiate import with_crd_of as with_crd_of
    from flarekit.compat._pytorchjob_to_trainjob import (
        pytorchjob_to_trainjob as pytorchjob_to_trainjob,
    )
    from flarekit.compat._raycluster import raycluster_v1alpha1_to_v1 as raycluster_v1alpha1_to_v1
    from flarekit.compat._registry import CONVERSIONS as CONVERSIONS
    from flarekit.compat._registry import convert as convert
    from flarekit.compat._releases import FamilyRelease as FamilyRelease
    from flarekit.compat._releases import ServedVersion as ServedVersion
    from flarekit.compat._releases import ServerReleases as ServerReleases
    from flarekit.compat._torch_runtime import PATCH_MANAGER as PATCH_MANAGER
    from flarekit.compat._torch_runtime import TORCH_DISTRIBUTED as TORCH_DISTRIBUTED
    from flarekit.compat._trainer_pod import move_pod_field as move_pod_field
    from flarekit.compat._trainer_pod import pod_field_of as pod_field_of
    from flarekit.compat._trainjob_to_pytorchjob import (
        trainjob_to_pytorchjob as trainjob_to_pytorchjob,
    )
    from flarekit.compat._write import prepare_write as prepare_write
    from flarekit.compat._write import write_version as write_version

__getattr__, __dir__, __all__ = lazy_module(
    globals(),
    {
        "flarekit.compat._appwrapper": (
            "appwrapper_v1beta1_to_v1beta2",
            "appwrapper_v1beta2_to_v1beta1",
        ),
        "flarekit.compat._cel": ("RuleFailure", "RulesFailed", "rule_failures"),
        "flarekit.compat._errors": (
            "ConversionError",
            "NoConversion",
        ),
        "flarekit.compat._fields": (
            "FieldUnavailable",
            "MissingField",
            "check_fields",
            "missing_fields",
        ),
        "flarekit.compat._kueue_admissioncheck": (
            "admissioncheck_v1beta1_to_v1beta2",
            "admissioncheck_v1beta2_to_v1beta1",
        ),
        "flarekit.compat._kueue_clusterqueue": (
            "clusterqueue_v1beta1_to_v1beta2",
            "clusterqueue_v1beta2_to_v1beta1",
        ),
        "flarekit.compat._kueue_localqueue": (
            "localqueue_v1beta1_to_v1beta2",
            "localqueue_v1beta2_to_v1beta1",
        ),
        "flarekit.compat._kueue_multikueuecluster": (
            "multikueuecluster_v1beta1_to_v1beta2",
            "multikueuecluster_v1beta2_to_v1beta1",
        ),
        "flarekit.compat._kueue_workload": (
            "workload_v1beta1_to_v1beta2",
            "workload_v1beta2_to_v1beta1",
        ),
        "flarekit.compat._negotiate": (
            "family_release",
            "negotiate",
            "with_crd_of",
        ),
        "flarekit.compat._pytorchjob_to_trainjob": ("pytorchjob_to_trainjob",),
        "flarekit.compat._raycluster": ("raycluster_v1alpha1_to_v1",),
        "flarekit.compat._registry": (
            "CONVERSIONS",
            "convert",
        ),
        "flarekit.compat._releases": (
            "FamilyRelease",
            "ServedVersion",
            "ServerReleases",
        ),
        "flarekit.compat._torch_runtime": (
            "PATCH_MANAGER",
            "TORCH_DISTRIBUTED",
        ),
        "flarekit.compat._trainer_pod": (
            "move_pod_field",
            "pod_field_of",
        ),
        "flarekit.compat._trainjob_to_pytorchjob": ("trainjob_to_pytorchjob",),
        "flarekit.compat._write": (
            "prepare_write",
            "write_version",
        ),
    },
)
