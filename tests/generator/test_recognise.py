"""Structural recognition of the Kubernetes types CRD schemas embed.

Recognition must find a pod template wherever it sits and whatever it is called,
must not anchor on small shapes many types share, and must not know any family's
field names: the same rules work on made-up definitions.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from small_package import fixture_doc

from flarekit_generator.core_copies import reconcile
from flarekit_generator.ir import Node
from flarekit_generator.k8s_types import KubernetesDefinitions
from flarekit_generator.parse import parse_schema
from flarekit_generator.recognise import Recogniser

CORE = "io.k8s.api.core.v1."
META = "io.k8s.apimachinery.pkg.apis.meta.v1."
STRING = {"type": "string"}
INT = {"type": "integer"}


def _obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def widget_spec_schema() -> dict[str, Any]:
    doc = fixture_doc("widgets-v1.1.0.yaml")
    schema: dict[str, Any] = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return copy.deepcopy(schema["properties"]["spec"])


def pod_template() -> dict[str, Any]:
    template: dict[str, Any] = widget_spec_schema()["properties"]["template"]
    return template


def annotated(defs: KubernetesDefinitions, schema: dict[str, Any]) -> tuple[Node, Recogniser]:
    """Parse a CRD root schema (``schema`` under ``spec``) and recognise what it embeds."""
    root = parse_schema(_obj(spec=schema))
    recogniser = Recogniser(defs)
    recogniser.annotate(root)
    return root.properties["spec"], recogniser


def at(node: Node, *path: str) -> Node:
    """The node at a path of property names, ``[]`` for list items and ``{}`` for map values."""
    for step in path:
        if step == "[]":
            assert node.items is not None
            node = node.items
        elif step == "{}":
            assert node.values is not None
            node = node.values
        else:
            node = node.properties[step]
    return node


# --------------------------------------------------------------------------- real definitions
def test_pod_template_is_recognised_with_everything_inside(k8s_defs: KubernetesDefinitions) -> None:
    spec, recogniser = annotated(k8s_defs, widget_spec_schema())
    template = at(spec, "template")
    assert template.core_type == CORE + "PodTemplateSpec"
    assert at(template, "metadata").core_type == META + "ObjectMeta"
    assert at(template, "spec").core_type == CORE + "PodSpec"
    container = at(template, "spec", "containers", "[]")
    assert container.core_type == CORE + "Container"
    assert at(container, "ports", "[]").core_type == CORE + "ContainerPort"
    assert at(container, "resources").core_type == CORE + "ResourceRequirements"
    assert container in recogniser.copies[CORE + "Container"]
    assert container.required == ("name",)


def test_conditions_are_recognised_as_meta_conditions(k8s_defs: KubernetesDefinitions) -> None:
    doc = fixture_doc("widgets-v1.1.0.yaml")
    status = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
    node, _ = annotated(k8s_defs, status)
    assert at(node, "conditions", "[]").core_type == META + "Condition"


def test_the_widgets_own_shapes_are_not_taken_for_kubernetes_types(
    k8s_defs: KubernetesDefinitions,
) -> None:
    spec, _ = annotated(k8s_defs, widget_spec_schema())
    assert spec.core_type is None
    for name in ("fooRef", "barSettings", "livenessCheck", "container", "quantity", "leader"):
        assert at(spec, name).core_type is None, name
    assert at(spec, "ports", "[]").core_type is None
    assert at(spec, "items", "[]").core_type is None


@pytest.mark.parametrize(
    "wrap",
    [
        pytest.param(lambda t: _obj(blueprint=t), id="renamed"),
        pytest.param(lambda t: _obj(pools=_array(_obj(podShape=t))), id="in-a-list-item"),
        pytest.param(
            lambda t: _obj(byZone={"type": "object", "additionalProperties": t}), id="map-value"
        ),
    ],
)
def test_recognition_does_not_depend_on_where_or_under_which_name(
    k8s_defs: KubernetesDefinitions, wrap: Any
) -> None:
    spec, _ = annotated(k8s_defs, wrap(pod_template()))
    found = [n.core_type for n in _walk(spec) if n.core_type == CORE + "PodTemplateSpec"]
    assert len(found) == 1


def test_a_different_shape_called_template_is_not_a_pod_template(
    k8s_defs: KubernetesDefinitions,
) -> None:
    spec, _ = annotated(
        k8s_defs, _obj(template=_obj(metadata=STRING, spec=_obj(replicas=INT, colour=STRING)))
    )
    assert at(spec, "template").core_type is None


def test_a_wrongly_typed_field_breaks_the_match(k8s_defs: KubernetesDefinitions) -> None:
    template = pod_template()
    container = template["properties"]["spec"]["properties"]["containers"]["items"]
    container["properties"]["image"] = INT
    spec, _ = annotated(k8s_defs, _obj(template=template))
    assert at(spec, "template").core_type != CORE + "PodTemplateSpec"
    assert at(spec, "template", "spec", "containers", "[]").core_type != CORE + "Container"


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(_obj(name=STRING, namespace=STRING), id="name-namespace"),
        pytest.param(_obj(name=STRING, key=STRING), id="name-key"),
        pytest.param(_obj(name=STRING), id="name"),
    ],
)
def test_small_flat_shapes_are_never_anchored(
    k8s_defs: KubernetesDefinitions, shape: dict[str, Any]
) -> None:
    recogniser = Recogniser(k8s_defs)
    assert recogniser.best_definition(parse_schema(shape)) is None


def test_flat_shapes_of_other_api_groups_need_more_evidence(
    k8s_defs: KubernetesDefinitions,
) -> None:
    # A job's condition looks like a Deployment's (apps/v1) but is not one.
    condition = _obj(
        type=STRING,
        status=STRING,
        reason=STRING,
        message=STRING,
        lastUpdateTime={"type": "string", "format": "date-time"},
        lastTransitionTime={"type": "string", "format": "date-time"},
    )
    assert Recogniser(k8s_defs).best_definition(parse_schema(condition)) is None


def test_a_partial_shape_that_requires_what_the_type_leaves_optional_is_its_own(
    k8s_defs: KubernetesDefinitions,
) -> None:
    # Kueue's priorityClassRef: group, kind and name (three of meta/v1 StatusDetails' six
    # optional fields), all required. Taken for StatusDetails, it made that shared class
    # require a Kueue group and kind in every API error's details.
    reference = _obj(
        group={"type": "string", "enum": ["kueue.x-k8s.io", "scheduling.k8s.io"]},
        kind={"type": "string", "enum": ["WorkloadPriorityClass", "PriorityClass"]},
        name=STRING,
    )
    reference["required"] = ["group", "kind", "name"]
    recogniser = Recogniser(k8s_defs)
    assert recogniser.best_definition(parse_schema(reference)) is None
    optional = _obj(group=STRING, kind=STRING, name=STRING)
    assert Recogniser(k8s_defs).best_definition(parse_schema(optional)) == META + "StatusDetails"


def test_a_whole_copy_may_require_more_than_the_type() -> None:
    defs = _defs({CORE + "Box": {"type": "object", "properties": BOX_PROPS}})
    stricter = {**_obj(**BOX_PROPS), "required": ["p0", "p1"]}
    spec, _ = annotated(defs, _obj(box=stricter))
    assert at(spec, "box").core_type == CORE + "Box"


# --------------------------------------------------------------------------- made-up definitions
def _defs(raw: dict[str, dict[str, Any]]) -> KubernetesDefinitions:
    return KubernetesDefinitions(raw)


def _ref(name: str) -> dict[str, str]:
    return {"$ref": "#/$defs/" + name}


BOX_PROPS: dict[str, Any] = {f"p{i}": {"type": "string"} for i in range(10)}


def test_made_up_definitions_are_recognised_the_same_way() -> None:
    defs = _defs(
        {
            CORE + "Box": {"type": "object", "properties": {"width": INT, "height": INT}},
            CORE
            + "Crate": {
                "type": "object",
                "properties": {"boxes": _array(_ref(CORE + "Box")), "owner": STRING},
            },
        }
    )
    spec, _ = annotated(defs, _obj(shipment=_obj(boxes=_array(_obj(width=INT)), owner=STRING)))
    assert at(spec, "shipment").core_type == CORE + "Crate"
    assert at(spec, "shipment", "boxes", "[]").core_type == CORE + "Box"


def test_a_few_newer_properties_are_tolerated_and_recorded() -> None:
    defs = _defs({CORE + "Box": {"type": "object", "properties": BOX_PROPS}})
    copy_with_extra = {**BOX_PROPS, "newField": INT}
    spec, recogniser = annotated(defs, _obj(box=_obj(**copy_with_extra)))
    assert at(spec, "box").core_type == CORE + "Box"
    shapes = reconcile(recogniser.copies, [spec])
    assert shapes.node_for(defs, CORE + "Box").properties["newField"].shape == "integer"


def test_too_many_unknown_properties_break_the_match() -> None:
    defs = _defs({CORE + "Box": {"type": "object", "properties": BOX_PROPS}})
    spec, _ = annotated(defs, _obj(box=_obj(**BOX_PROPS, newA=INT, newB=INT)))
    assert at(spec, "box").core_type is None


def test_core_group_wins_a_tie_and_other_groups_need_depth() -> None:
    props = {"alpha": STRING, "beta": INT, "gamma": STRING, "delta": INT}
    shape = parse_schema(_obj(**props))
    apps = "io.k8s.api.apps.v1.Gizmo"
    both = _defs(
        {
            apps: {"type": "object", "properties": props},
            CORE + "Gizmo": {"type": "object", "properties": props},
        }
    )
    assert Recogniser(both).best_definition(shape) == CORE + "Gizmo"
    only_apps = _defs({apps: {"type": "object", "properties": props}})
    assert Recogniser(only_apps).best_definition(shape) is None


def _walk(node: Node) -> list[Node]:
    out = [node]
    for child in node.children():
        out += _walk(child)
    return out
