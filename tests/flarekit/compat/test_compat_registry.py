"""The conversion table: dispatch, identity, and the error for pairs that have none."""

from __future__ import annotations

from pathlib import Path

import pytest
from compat_support import assert_admitted, load, sample_params

from flarekit.compat import CONVERSIONS, NoConversion, convert, raycluster_v1alpha1_to_v1
from flarekit_models.ray.v1alpha1 import RayCluster as RayClusterV1alpha1


@pytest.mark.parametrize("path", sample_params("ray.io/v1alpha1", "RayCluster"))
def test_raycluster_v1alpha1_samples_become_v1(path: Path) -> None:
    original = load(path)
    model = RayClusterV1alpha1.model_validate(original)
    converted = raycluster_v1alpha1_to_v1(model).to_dict()
    assert converted == {**original, "apiVersion": "ray.io/v1"}
    assert_admitted(converted)


def test_no_conversion_names_the_pair_and_what_exists() -> None:
    cluster = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "c"}}
    with pytest.raises(NoConversion, match=r"ray\.io/v1 RayCluster to ray\.io/v1alpha1.*none"):
        convert(cluster, "ray.io/v1alpha1")
    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "LocalQueue",
        "metadata": {"name": "q"},
    }
    with pytest.raises(NoConversion, match=r"there are: kueue\.x-k8s\.io/v1beta2 LocalQueue"):
        convert(queue, "kueue.x-k8s.io/v1alpha1")


def test_same_version_is_returned_validated() -> None:
    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "q", "namespace": "n"},
        "spec": {"clusterQueue": "cq"},
    }
    assert convert(queue, "kueue.x-k8s.io/v1beta2").to_dict() == queue


def test_a_wrong_source_object_is_refused_before_converting() -> None:
    with pytest.raises(ValueError, match="apiVersion and kind"):
        convert({"metadata": {}}, "ray.io/v1")


def test_every_kueue_kind_served_in_both_versions_converts_both_ways() -> None:
    kinds = {k for (a, k, t) in CONVERSIONS if a.startswith("kueue.x-k8s.io/")}
    for kind in kinds:
        assert ("kueue.x-k8s.io/v1beta1", kind, "kueue.x-k8s.io/v1beta2") in CONVERSIONS
        assert ("kueue.x-k8s.io/v1beta2", kind, "kueue.x-k8s.io/v1beta1") in CONVERSIONS
    assert len(kinds) == 11
