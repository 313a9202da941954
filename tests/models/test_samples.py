"""The whole sample corpus: every object validates and round-trips losslessly.

``model_validate(obj).model_dump(mode="json", by_alias=True, exclude_unset=True) == obj``
must hold for every real object in ``../shared/samples``. The few objects that
are truly invalid against their CRD are listed below with the reason, and
their error must name the field path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from flarekit_models import UnknownResourceError, resource_model

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples"

_KUTTL_ASSERT = (
    "a kuttl test assertion: a partial object that checks status only, while the "
    "MCAD AppWrapper CRD requires spec"
)
_JOBSET_RULE_NAME = (
    "failurePolicy.rules[].name is required by the JobSet CRD schema; on a real cluster "
    "JobSet's mutating webhook fills it in, which neither the schema nor a client can do"
)

#: Objects invalid against the CRD that serves them: file name -> (reason, field paths).
INVALID: dict[str, tuple[str, set[str]]] = {
    **{
        f"multi-cluster-app-dispatcher--test-e2e-kuttl-{name}-assert-yaml--{doc}.yaml": (
            _KUTTL_ASSERT,
            {"spec"},
        )
        for name, doc in [
            ("borrowing-steps-04", 0),
            ("deployment-01-steps-01", 0),
            ("deployment-01-steps-03", 0),
            ("deployment-01-steps-08", 0),
            ("deployment-02-steps-04", 0),
            ("deployment-03-steps-01", 0),
            ("deployment-03-steps-04", 0),
            ("deployment-03-steps-05", 0),
            ("quota-errors-03", 0),
            ("quota-forest-04", 0),
            ("quota-forest-06", 0),
            ("quota-forest-06", 3),
            ("quota-forest-07", 0),
            ("quota-forest-08", 0),
            ("quota-forest-09", 1),
            ("quota-forest-10", 0),
        ]
    },
    **{
        f"jobset--site-static-examples-failure-policy-{name}-yaml--0.yaml": (
            _JOBSET_RULE_NAME,
            {f"spec.failurePolicy.rules.{i}.name" for i in range(rules)},
        )
        for name, rules in [
            ("failjobset-action", 1),
            ("host-maintenance-event-model", 2),
            ("onjobfailurereasons-present-podfailurepolicy", 1),
            ("onjobfailurereasons-present", 1),
            ("restartjobset-action", 1),
            ("restartjobsetandignoremaxrestarts-action", 1),
        ]
    },
    "codeflare-sdk--tests-test-cluster-yamls-ray-unit-test-all-params-yaml--0.yaml": (
        "two volumeMounts of one container share mountPath /home/ray/test2; the Container "
        "schema keys volumeMounts by mountPath (x-kubernetes-list-type: map), so the API "
        "server refuses the duplicate too",
        {
            f"spec.{group}.template.spec.containers.0.volumeMounts.2.mountPath"
            for group in ("headGroupSpec", "workerGroupSpecs.0")
        },
    ),
    "kueue--site-static-examples-jobs-sample-xgboostjob-yaml--0.yaml": (
        "cpu: 0.5 is a JSON float; the CRD types resource quantities as integer or string "
        "(x-kubernetes-int-or-string), so the API server rejects it too ('0.5' or 500m work)",
        {
            f"spec.xgbReplicaSpecs.{role}.template.spec.containers.0.resources.requests.cpu"
            for role in ("Master", "Worker")
        },
    ),
}

#: Sample kinds that no pinned CRD defines: file name -> reason.
NOT_GENERATED = {
    "jobset--config-samples-jobset-v1alpha1-configuration-yaml--0.yaml": (
        "jobset.x-k8s.io/v1alpha1 Configuration is the JobSet controller's config file, not a CRD"
    ),
    "kueue--site-static-examples-jobs-sample-mpijob-yaml--0.yaml": (
        "kubeflow.org/v2beta1 MPIJob belongs to the MPI operator, which is not a pinned family"
    ),
}

FILES = sorted(SAMPLES.glob("*/*/*/*.yaml"))


def _load(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as stream:
        obj: dict[str, Any] = yaml.safe_load(stream)
    return obj


def test_the_corpus_is_there() -> None:
    assert len(FILES) > 250, f"expected the shared sample corpus under {SAMPLES}"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_sample_round_trips_losslessly(path: Path) -> None:
    obj = _load(path)
    if path.name in NOT_GENERATED:
        with pytest.raises(UnknownResourceError):
            resource_model(obj["apiVersion"], obj["kind"])
        return
    model = resource_model(obj["apiVersion"], obj["kind"])
    if path.name in INVALID:
        reason, fields = INVALID[path.name]
        with pytest.raises(ValidationError) as error:
            model.model_validate(obj)
        locs = {".".join(str(p) for p in e["loc"]) for e in error.value.errors()}
        assert locs == fields, reason
        return
    dumped = model.model_validate(obj).model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert dumped == obj


def test_the_lists_name_real_files() -> None:
    names = {p.name for p in FILES}
    assert set(INVALID) <= names
    assert set(NOT_GENERATED) <= names


def test_json_round_trip_keeps_integers_and_strings() -> None:
    from flarekit_models.ray.v1 import RayCluster

    obj = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "c", "creationTimestamp": "2024-01-02T03:04:05Z"},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "head",
                                "image": "rayproject/ray:2.9.0",
                                "resources": {"limits": {"cpu": 2, "memory": "500m"}},
                            }
                        ]
                    }
                },
            }
        },
    }
    model = RayCluster.model_validate_json(__import__("json").dumps(obj))
    assert model.to_dict() == obj
    limits = model.spec.head_group_spec.template.spec.containers[0].resources.limits  # type: ignore[union-attr]
    assert limits == {"cpu": 2, "memory": "500m"}
    assert type(limits["cpu"]) is int
