"""MCAD AppWrapper v1beta1 <-> AppWrapper v1beta2 on the samples, and what each refuses."""

from __future__ import annotations

import copy
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from compat_support import assert_admitted, load, sample_params

from flarekit._quantity import parse_quantity
from flarekit.compat import ConversionError, convert

V1BETA1 = "workload.codeflare.dev/v1beta1"
V1BETA2 = "workload.codeflare.dev/v1beta2"

#: Samples MCAD's own tests use that have no v1beta2 form, and the field that says why.
REFUSED = {
    "doc-usage-aw-02-yaml": "spec.schedulingSpec",
    "doc-usage-examples-aw-1-k8s-job3-yaml": "spec.resources.Items",
    "test-e2e-kuttl-borrowing-steps-04-install-yaml": "spec.schedulingSpec",
    "test-e2e-kuttl-deployment-01-steps-02-install-yaml": "spec.schedulingSpec",
    "test-e2e-kuttl-deployment-01-steps-03-install-yaml": "spec.schedulingSpec",
    "test-e2e-kuttl-deployment-01-steps-08-install-yaml": "spec.schedulingSpec",
    "test-e2e-kuttl-deployment-02-steps-01-install-yaml": "spec.schedulingSpec",
    "test-e2e-kuttl-deployment-02-steps-04-install-yaml": "spec.schedulingSpec",
    "test-e2e-kuttl-deployment-03-steps-04-install-yaml": "spec.schedulingSpec",
    "test-e2e-kuttl-deployment-03-steps-05-install-yaml": "spec.schedulingSpec",
    "test-e2e-kuttl-quota-forest-04-install-yaml": "spec.service",
    "test-e2e-kuttl-quota-forest-05-install-yaml": "spec.service",
    "test-e2e-kuttl-quota-forest-07-install-yaml": "spec.priority",
    "test-e2e-kuttl-quota-forest-08-install-yaml": "spec.priority",
    "test-e2e-kuttl-quota-forest-10-install-yaml": "spec.schedulingSpec",
    "test-e2e-kuttl-quota-forest-11-install-yaml": "spec.schedulingSpec",
    "test-perf-test-preempt-exp-kwok-yaml": "spec.priority",
    "test-perf-test-preempt-exp-yaml": "spec.priority",
    "test-yaml-0003-aw-job-no-quota-yaml": "spec.schedulingSpec",
    "test-yaml-0004-aw-large-job-no-quota-yaml": "spec.schedulingSpec",
    "test-yaml-0005-aw-two-quota-jobs-yaml": "spec.schedulingSpec",
    "test-yaml-0008-aw-default-yaml": "spec.priority",
}


def short(path: Path) -> str:
    return path.stem.split("--")[1]


def canonical(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` with MCAD's custom pod resources as numbers, zero entries left out: the round
    trip reads them back from the pod templates, which spell them their own way."""
    out = copy.deepcopy(obj)
    for item in out["spec"]["resources"]["GenericItems"]:
        for entry in item.get("custompodresources") or []:
            for which in ("requests", "limits"):
                values: dict[str, Decimal] = {
                    k: parse_quantity(v) for k, v in (entry.get(which) or {}).items()
                }
                entry[which] = {k: v for k, v in values.items() if v}
    return out


@pytest.mark.parametrize("path", sample_params(V1BETA1, "AppWrapper"))
def test_mcad_samples(path: Path) -> None:
    original = load(path)
    if "spec" not in original:
        pytest.skip(
            "a kuttl assertion (status only): not a valid AppWrapper, MCAD's CRD needs spec"
        )
    if short(path) in REFUSED:
        with pytest.raises(ConversionError) as caught:
            convert(original, V1BETA2)
        assert caught.value.path == REFUSED[short(path)]
        assert caught.value.source == f"{V1BETA1} AppWrapper"
        assert caught.value.path in str(caught.value)
        return
    converted = convert(original, V1BETA2).to_dict()
    assert_admitted(converted)
    items = original["spec"]["resources"]["GenericItems"]
    components = converted["spec"]["components"]
    assert [c["template"] for c in components] == [i["generictemplate"] for i in items]
    for item, component in zip(items, components, strict=True):
        custom = item.get("custompodresources") or []
        assert [p.get("replicas") for p in component.get("podSets", [])] == [
            c["replicas"] for c in custom
        ]
    back = convert(converted, V1BETA1).to_dict()
    assert_admitted(back)
    assert canonical(back) == canonical(original)
    if not any(i.get("custompodresources") for i in items):
        assert back == original


@pytest.mark.parametrize("path", sample_params(V1BETA2, "AppWrapper"))
def test_v1beta2_samples(path: Path) -> None:
    original = load(path)
    mcad = convert(original, V1BETA1).to_dict()
    assert_admitted(mcad)
    items = mcad["spec"]["resources"]["GenericItems"]
    assert [i["generictemplate"] for i in items] == [
        c["template"] for c in original["spec"]["components"]
    ]
    assert convert(mcad, V1BETA2).to_dict() == original


def raycluster_appwrapper(requests: dict[str, Any]) -> dict[str, Any]:
    def pod(cpu: str) -> dict[str, Any]:
        resources = {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}
        return {"spec": {"containers": [{"name": "ray", "image": "ray", "resources": resources}]}}

    cluster = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc"},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": pod("2")},
            "workerGroupSpecs": [
                {"groupName": "w", "replicas": 3, "rayStartParams": {}, "template": pod("1")}
            ],
        },
    }
    return {
        "apiVersion": V1BETA1,
        "kind": "AppWrapper",
        "metadata": {"name": "aw", "namespace": "ns"},
        "spec": {
            "resources": {
                "GenericItems": [
                    {
                        "replicas": 1,
                        "custompodresources": [
                            {"replicas": 1, "requests": {"cpu": "2"}},
                            {"replicas": 3, "requests": requests},
                        ],
                        "generictemplate": cluster,
                    }
                ]
            }
        },
    }


def test_custom_pod_resources_become_pod_sets_at_the_template_paths() -> None:
    converted = convert(raycluster_appwrapper({"cpu": "1000m", "nvidia.com/gpu": 0}), V1BETA2)
    assert converted.to_dict()["spec"]["components"][0]["podSets"] == [
        {"path": "template.spec.headGroupSpec.template", "replicas": 1},
        {"path": "template.spec.workerGroupSpecs[0].template", "replicas": 3},
    ]


def test_custom_pod_resources_that_differ_from_the_template_are_refused() -> None:
    with pytest.raises(ConversionError) as caught:
        convert(raycluster_appwrapper({"cpu": "4"}), V1BETA2)
    where = "spec.resources.GenericItems[0].custompodresources[1].requests[cpu]"
    assert caught.value.path == where
    assert "template.spec.workerGroupSpecs[0].template" in caught.value.reason


def test_custom_pod_resources_of_an_unknown_kind_are_refused() -> None:
    obj = raycluster_appwrapper({"cpu": "1"})
    item = obj["spec"]["resources"]["GenericItems"][0]
    item["generictemplate"] = {"apiVersion": "example.com/v1", "kind": "Widget"}
    with pytest.raises(ConversionError) as caught:
        convert(obj, V1BETA2)
    assert caught.value.path == "spec.resources.GenericItems[0].custompodresources"
    assert "example.com/v1 Widget" in caught.value.reason


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"replicas": 2}, "spec.resources.GenericItems[0].replicas"),
        ({"completionstatus": "Complete"}, "spec.resources.GenericItems[0].completionstatus"),
        ({"minavailable": 2}, "spec.resources.GenericItems[0].minavailable"),
    ],
)
def test_item_fields_without_counterpart_are_refused(change: dict[str, Any], path: str) -> None:
    obj = raycluster_appwrapper({"cpu": "1"})
    obj["spec"]["resources"]["GenericItems"][0].update(change)
    with pytest.raises(ConversionError) as caught:
        convert(obj, V1BETA2)
    assert caught.value.path == path


def test_mcad_status_is_refused() -> None:
    obj = raycluster_appwrapper({"cpu": "1"})
    obj["status"] = {"state": "Running"}
    with pytest.raises(ConversionError) as caught:
        convert(obj, V1BETA2)
    assert caught.value.path == "status"


def v1beta2(component: dict[str, Any], **spec: Any) -> dict[str, Any]:
    template = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {
            "parallelism": 2,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "a", "image": "x", "resources": {"requests": {"cpu": "1"}}},
                        {"name": "b", "image": "x", "resources": {"requests": {"cpu": "500m"}}},
                    ],
                }
            },
        },
    }
    return {
        "apiVersion": V1BETA2,
        "kind": "AppWrapper",
        "metadata": {"name": "aw"},
        "spec": {"components": [{"template": template, **component}], **spec},
    }


def test_declared_pod_sets_become_custom_pod_resources_read_from_the_template() -> None:
    pod_sets = [{"path": "template.spec.template", "replicas": 2}]
    mcad = convert(v1beta2({"podSets": pod_sets}), V1BETA1).to_dict()
    [item] = mcad["spec"]["resources"]["GenericItems"]
    assert item["replicas"] == 1
    assert item["custompodresources"] == [{"replicas": 2, "requests": {"cpu": "1500m"}}]
    assert convert(mcad, V1BETA2).to_dict() == v1beta2({"podSets": pod_sets})


@pytest.mark.parametrize(
    ("component", "spec", "path"),
    [
        ({"podSets": [{"path": "template.spec", "replicas": 1}]}, {}, "spec.components[0].podSets"),
        (
            {"podSets": [{"path": "template.spec.template", "annotations": {"a": "b"}}]},
            {},
            "spec.components[0].podSets[0].annotations",
        ),
        ({"annotations": {"a": "b"}}, {}, "spec.components[0].annotations"),
        ({"podSetInfos": [{"labels": {"a": "b"}}]}, {}, "spec.components[0].podSetInfos"),
        ({}, {"suspend": True}, "spec.suspend"),
        ({}, {"managedBy": "kueue.x-k8s.io/multikueue"}, "spec.managedBy"),
    ],
)
def test_v1beta2_fields_without_counterpart_are_refused(
    component: dict[str, Any], spec: dict[str, Any], path: str
) -> None:
    with pytest.raises(ConversionError) as caught:
        convert(v1beta2(component, **spec), V1BETA1)
    assert caught.value.path == path
    assert caught.value.target == f"{V1BETA1} AppWrapper"


def test_an_unsuspended_appwrapper_converts_without_the_default() -> None:
    mcad = convert(v1beta2({}, suspend=False), V1BETA1).to_dict()
    assert "suspend" not in mcad["spec"]


def test_unknown_fields_are_carried_both_ways() -> None:
    obj = v1beta2({"futureComponent": {"x": 1}}, futureSpec=[1, 2])
    obj["futureRoot"] = "kept"
    mcad = convert(obj, V1BETA1).to_dict()
    assert mcad["futureRoot"] == "kept"
    assert mcad["spec"]["futureSpec"] == [1, 2]
    assert mcad["spec"]["resources"]["GenericItems"][0]["futureComponent"] == {"x": 1}
    assert convert(mcad, V1BETA2).to_dict() == obj
