"""Conversions between API versions (and, for training jobs, kinds) that never drop a field.

Each pair is written out in its own module as plain functions from one model (or its JSON
dict) to the other; :func:`convert` picks one by the object's apiVersion and kind. A field
the target cannot express raises :class:`ConversionError` naming its path and both versions;
fields unknown to both versions (kept by the models) are carried where their parent exists.

Before a facade writes, `prepare_write` also evaluates the CEL rules of the CRD
(`rule_failures`, raising `RulesFailed`), as the API server does.
"""

from __future__ import annotations

from flarekit.compat._appwrapper import (
    appwrapper_v1beta1_to_v1beta2,
    appwrapper_v1beta2_to_v1beta1,
)
from flarekit.compat._cel import RuleFailure, RulesFailed, rule_failures
from flarekit.compat._errors import ConversionError, NoConversion
from flarekit.compat._fields import FieldUnavailable, MissingField, check_fields, missing_fields
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
from flarekit.compat._kueue_workload import (
    workload_v1beta1_to_v1beta2,
    workload_v1beta2_to_v1beta1,
)
from flarekit.compat._negotiate import family_release, forget_negotiated, negotiate
from flarekit.compat._pytorchjob_to_trainjob import pytorchjob_to_trainjob
from flarekit.compat._raycluster import raycluster_v1alpha1_to_v1
from flarekit.compat._registry import CONVERSIONS, convert
from flarekit.compat._releases import FamilyRelease, ServedVersion, ServerReleases
from flarekit.compat._torch_runtime import PATCH_MANAGER, TORCH_DISTRIBUTED
from flarekit.compat._trainer_pod import move_pod_field, pod_field_of
from flarekit.compat._trainjob_to_pytorchjob import trainjob_to_pytorchjob
from flarekit.compat._write import prepare_write, write_version

__all__ = [
    "CONVERSIONS",
    "PATCH_MANAGER",
    "TORCH_DISTRIBUTED",
    "ConversionError",
    "FamilyRelease",
    "FieldUnavailable",
    "MissingField",
    "NoConversion",
    "RuleFailure",
    "RulesFailed",
    "ServedVersion",
    "ServerReleases",
    "admissioncheck_v1beta1_to_v1beta2",
    "admissioncheck_v1beta2_to_v1beta1",
    "appwrapper_v1beta1_to_v1beta2",
    "appwrapper_v1beta2_to_v1beta1",
    "check_fields",
    "clusterqueue_v1beta1_to_v1beta2",
    "clusterqueue_v1beta2_to_v1beta1",
    "convert",
    "family_release",
    "forget_negotiated",
    "localqueue_v1beta1_to_v1beta2",
    "localqueue_v1beta2_to_v1beta1",
    "missing_fields",
    "move_pod_field",
    "multikueuecluster_v1beta1_to_v1beta2",
    "multikueuecluster_v1beta2_to_v1beta1",
    "negotiate",
    "pod_field_of",
    "prepare_write",
    "pytorchjob_to_trainjob",
    "raycluster_v1alpha1_to_v1",
    "rule_failures",
    "trainjob_to_pytorchjob",
    "workload_v1beta1_to_v1beta2",
    "workload_v1beta2_to_v1beta1",
    "write_version",
]
