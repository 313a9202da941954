"""What the package generated from the fixture CRDs offers besides validation.

The registry (scope, subresources, versions served, stored and deprecated per
release), the per-release field table, the compact CRDs for emulators, the
shared classes (Kubernetes types, one class per role family) and lazy loading.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from small_package import ModelRunner

from flarekit_generator.naming import words

V1 = "example.flarekit.dev/v1"
V1BETA1 = "example.flarekit.dev/v1beta1"


def resource(models: ModelRunner, api_version: str, kind: str) -> dict[str, Any]:
    info: dict[str, Any] = models.run(
        "import dataclasses, flarekit_models\n"
        "r = flarekit_models.lookup(args['v'], args['k'])\n"
        "result = dict(dataclasses.asdict(r), scope=r.scope)",
        v=api_version,
        k=kind,
    )
    return info


# --------------------------------------------------------------------------- registry
def test_registry_lists_every_served_kind_and_version(models: ModelRunner) -> None:
    listed = models.run(
        "import flarekit_models\n"
        "result = sorted(f'{r.api_version} {r.kind}' for r in flarekit_models.RESOURCES)"
    )
    # v1alpha1 of Widget is not served by any release: no model for it.
    assert listed == [f"{V1} Gadget", f"{V1} Widget", f"{V1BETA1} Widget"]


def test_namespaced_kind_with_subresources(models: ModelRunner) -> None:
    info = resource(models, V1, "Widget")
    assert info["scope"] == "Namespaced" and info["namespaced"] is True
    assert info["subresources"] == ["scale", "status"]
    assert (info["plural"], info["singular"], info["list_kind"]) == (
        "widgets",
        "widget",
        "WidgetList",
    )
    assert (info["short_names"], info["categories"]) == (["wd"], ["examples"])
    assert info["model_path"] == "flarekit_models.example.v1.Widget"


def test_cluster_kind_with_defaulted_names(models: ModelRunner) -> None:
    info = resource(models, V1, "Gadget")
    assert info["scope"] == "Cluster" and info["namespaced"] is False
    assert info["subresources"] == []
    assert (info["singular"], info["list_kind"]) == ("gadget", "GadgetList")


def test_versions_served_stored_and_deprecated_per_release(models: ModelRunner) -> None:
    v1 = resource(models, V1, "Widget")
    assert v1["served_by"] == ["widgets@v1.0.0", "widgets@v1.1.0"]
    assert v1["storage_in"] == ["widgets@v1.1.0"]
    assert v1["deprecated_in"] == []
    v1beta1 = resource(models, V1BETA1, "Widget")
    assert v1beta1["served_by"] == ["widgets@v1.0.0", "widgets@v1.1.0"]
    assert v1beta1["storage_in"] == ["widgets@v1.0.0"]
    assert v1beta1["deprecated_in"] == ["widgets@v1.1.0"]


def test_unknown_kind_error_lists_the_known_ones(models: ModelRunner) -> None:
    message = models.run(
        "import flarekit_models\n"
        "try:\n"
        "    flarekit_models.lookup('example.flarekit.dev/v1alpha1', 'Widget')\n"
        "except flarekit_models.UnknownResourceError as e:\n"
        "    result = str(e)"
    )
    assert "apiVersion='example.flarekit.dev/v1alpha1', kind='Widget'" in message
    assert f"{V1BETA1} Widget" in message


def test_model_and_registry_point_at_each_other(models: ModelRunner) -> None:
    found = models.run(
        "import flarekit_models\n"
        "from flarekit_models.example.v1beta1 import Widget\n"
        "info = Widget.resource_info()\n"
        "result = [info.api_version, flarekit_models.resource_model(info.api_version, 'Widget')"
        " is Widget]"
    )
    assert found == [V1BETA1, True]


# --------------------------------------------------------------------------- field table
def test_field_table_tells_which_release_has_a_field(models: ModelRunner) -> None:
    table: dict[str, list[str]] = models.run(
        "from flarekit_models._fields import field_releases\n"
        "result = field_releases(args['v'], 'Widget')",
        v=V1,
    )
    both, newer = ["widgets@v1.0.0", "widgets@v1.1.0"], ["widgets@v1.1.0"]
    assert table["spec.mode"] == both
    assert table["spec.tags"] == both
    assert table["status.phase"] == both
    assert table["spec.minReplicas"] == newer
    assert table["spec.items[].replicas"] == newer
    assert table["spec.zones{}.capacity"] == newer
    # The table stops at embedded Kubernetes types.
    assert table["spec.template"] == newer
    assert not [path for path in table if path.startswith(("spec.template.", "status.conditions["))]


def test_field_table_of_one_path(models: ModelRunner) -> None:
    found = models.run(
        "from flarekit_models._fields import releases_with\n"
        "result = [releases_with(args['v'], 'Widget', 'spec.color'),"
        " releases_with(args['v'], 'Widget', 'spec.nope'),"
        " releases_with(args['v'], 'Nothing', 'spec')]",
        v=V1BETA1,
    )
    assert found == [["widgets@v1.0.0", "widgets@v1.1.0"], [], []]


# --------------------------------------------------------------------------- CRD data
def test_compact_crds_per_release(models: ModelRunner) -> None:
    found = models.run(
        "from flarekit_models import _crds\n"
        "crds = _crds.crds_for({'widgets': 'v1.0.0', 'gadgets': 'v0.3.0'})\n"
        "result = [_crds.RELEASES, _crds.default_releases(), crds]"
    )
    releases, defaults, crds = found
    assert releases == {"gadgets": ["v0.3.0"], "widgets": ["v1.0.0", "v1.1.0"]}
    assert defaults == {"gadgets": "v0.3.0", "widgets": "v1.1.0"}
    assert sorted(c["metadata"]["name"] for c in crds) == [
        "gadgets.example.flarekit.dev",
        "widgets.example.flarekit.dev",
    ]
    widget = next(c for c in crds if c["spec"]["names"]["kind"] == "Widget")
    assert [v["name"] for v in widget["spec"]["versions"]] == ["v1", "v1beta1"]
    assert "description" not in str(widget)
    source = widget["metadata"]["annotations"]["flarekit.dev/source"]
    assert source.startswith("tests/generator/fixtures/widgets-v1.0.0.yaml sha256:")


# --------------------------------------------------------------------------- shared classes
def test_embedded_pod_template_is_the_core_type(models: ModelRunner) -> None:
    found = models.run(
        "from flarekit_models.core.v1 import Container, PodTemplateSpec, ResourceRequirements\n"
        "from flarekit_models.meta.v1 import Condition, ObjectMeta\n"
        "w = model('example.v1.Widget').model_validate(args['d'])\n"
        "c = w.spec.template.spec.containers[0]\n"
        "result = [type(w.spec.template) is PodTemplateSpec, type(c) is Container,"
        " type(c.resources) is ResourceRequirements, type(w.status.conditions[0]) is Condition,"
        " type(w.metadata) is ObjectMeta, type(w.spec.template.metadata) is ObjectMeta]",
        d={
            "metadata": {"name": "w"},
            "spec": {
                "mode": "Fast",
                "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "c", "resources": {}}]},
                },
            },
            "status": {
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "r",
                        "message": "m",
                        "lastTransitionTime": "2024-05-01T10:00:00Z",
                    }
                ]
            },
        },
    )
    assert found == [True] * 6


def test_no_family_class_copies_a_kubernetes_type(models: ModelRunner) -> None:
    names = models.run("import flarekit_models.example.v1 as m\nresult = m.__all__")
    core = models.run("import flarekit_models.core.v1 as m\nresult = m.__all__")
    assert "PodTemplateSpec" in core and "Container" in core
    assert not set(names) & set(core)
    assert not [n for n in names if n.endswith(("Template", "TemplateSpec", "Condition"))]


def test_same_shape_and_role_share_one_class_across_kinds(models: ModelRunner) -> None:
    found = models.run(
        "import flarekit_models.example.v1 as m\n"
        "w = m.Widget.model_validate(args['w'])\n"
        "g = m.Gadget.model_validate(args['g'])\n"
        "result = [type(x).__name__ for x in"
        " (w.spec.liveness_check, w.spec.readiness_check, g.spec.readiness_check)]",
        w={"spec": {"mode": "Fast", "livenessCheck": {}, "readinessCheck": {}}},
        g={"spec": {"serial": "AB-1234", "readinessCheck": {}}},
    )
    assert found == ["Check", "Check", "Check"]


def test_same_shape_under_unrelated_roles_keeps_separate_classes(models: ModelRunner) -> None:
    found = models.run(
        "w = model('example.v1.Widget').model_validate(args['w'])\n"
        "result = [type(w.spec.foo_ref).__name__, type(w.spec.bar_settings).__name__]",
        w={"spec": {"mode": "Fast", "fooRef": {}, "barSettings": {}}},
    )
    assert found == ["FooRef", "BarSettings"]


def test_class_names_are_never_numbered(models: ModelRunner) -> None:
    names = models.run(
        "import flarekit_models.example.v1 as a, flarekit_models.example.v1beta1 as b\n"
        "result = a.__all__ + b.__all__"
    )
    assert {"LeaderSpec", "FollowerSpec", "WidgetContainer", "WidgetQuantity"} <= set(names)
    assert not [n for n in names if any(ch.isdigit() for ch in n)]
    assert all(words(n)[0][0].isupper() for n in names)


# --------------------------------------------------------------------------- laziness
def test_models_bind_other_files_on_first_use(small_package: Path) -> None:
    fresh = ModelRunner(small_package.parent)
    try:
        found = fresh.run(
            "import sys\n"
            "from flarekit_models.example.v1 import Widget\n"
            "loaded = lambda: sorted(m for m in sys.modules if m.startswith('flarekit_models.'))\n"
            "before = loaded()\n"
            "Widget.model_validate({'spec': {'mode': 'Fast'}})\n"
            "result = [before, loaded()]"
        )
    finally:
        fresh.close()
    before, after = found
    assert "flarekit_models.example.v1._widget" in before
    assert "flarekit_models.example.v1._widget_types" not in before
    assert "flarekit_models.core.v1._pod_template_spec" not in before
    assert "flarekit_models.core.v1._pod_template_spec" in after
    assert "flarekit_models.example.v1._gadget" not in after


@pytest.mark.parametrize("module", ["example.v1", "example.v1beta1", "core.v1", "meta.v1"])
def test_every_exported_class_builds(models: ModelRunner, module: str) -> None:
    failures = models.run(
        "import importlib\n"
        "m = importlib.import_module('flarekit_models.' + args['m'])\n"
        "result = []\n"
        "for name in m.__all__:\n"
        "    try:\n"
        "        getattr(m, name).model_json_schema()\n"
        "    except Exception as e:\n"
        "        result.append(f'{name}: {e}')",
        m=module,
    )
    assert failures == []
