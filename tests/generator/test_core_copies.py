"""Which CRD copies of a Kubernetes type share its class (flarekit_generator.core_copies).

Made-up definitions, so each rule is seen alone: copies that check the same share the class
and the class checks what they check; a copy that checks something else gets a class of its
own family, and so does every copy above it.
"""

from __future__ import annotations

from typing import Any

from flarekit_generator.core_copies import reconcile
from flarekit_generator.ir import Node
from flarekit_generator.k8s_types import KubernetesDefinitions
from flarekit_generator.parse import parse_schema
from flarekit_generator.plan import FamilyPlanner, plan_core
from flarekit_generator.recognise import Recogniser

CORE = "io.k8s.api.core.v1."
STRING = {"type": "string"}
INT = {"type": "integer"}
REF_PROPS = {"apiGroup": STRING, "kind": STRING, "name": STRING}


def _obj(required: tuple[str, ...] = (), **properties: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = list(required)
    return out


def _defs() -> KubernetesDefinitions:
    return KubernetesDefinitions(
        {
            CORE + "Reference": {"type": "object", "properties": REF_PROPS},
            CORE
            + "Holder": {
                "type": "object",
                "properties": {
                    "ref": {"$ref": "#/$defs/" + CORE + "Reference"},
                    "label": STRING,
                    "size": INT,
                },
            },
        }
    )


def _reference(**name: Any) -> dict[str, Any]:
    return _obj(("name",), apiGroup=STRING, kind=STRING, name={"type": "string", **name})


def _plan(**fields: dict[str, Any]) -> tuple[dict[str, Node], Any, Any]:
    defs = _defs()
    root = parse_schema(_obj(spec=_obj(**fields)))
    recogniser = Recogniser(defs)
    recogniser.annotate(root)
    shapes = reconcile(recogniser.copies, [root])
    return root.properties["spec"].properties, shapes, defs


def test_copies_that_agree_share_the_class_with_their_checks() -> None:
    spec, shapes, defs = _plan(
        first=_reference(minLength=1), second=_reference(minLength=1), third=_reference(minLength=1)
    )
    assert {node.core_type for node in spec.values()} == {CORE + "Reference"}
    node = shapes.node_for(defs, CORE + "Reference")
    assert node.required == ("name",)
    assert node.properties["name"].min_length == 1
    assert shapes.unshared == {}


def test_a_copy_that_checks_something_else_gets_its_own_class() -> None:
    spec, shapes, defs = _plan(
        plain=_reference(), other=_reference(), strict=_reference(pattern="^[a-z]+$")
    )
    assert spec["plain"].core_type == spec["other"].core_type == CORE + "Reference"
    assert spec["strict"].core_type is None and spec["strict"].copy_of == CORE + "Reference"
    assert shapes.node_for(defs, CORE + "Reference").properties["name"].pattern is None
    assert shapes.unshared == {CORE + "Reference": 1}


def test_a_copy_that_requires_less_is_not_held_to_more() -> None:
    loose = _obj(apiGroup=STRING, kind=STRING, name=STRING)  # name not required
    spec, shapes, defs = _plan(a=_reference(), b=_reference(), loose=loose)
    assert spec["loose"].core_type is None
    assert shapes.node_for(defs, CORE + "Reference").required == ("name",)


def test_a_copy_lacking_a_newer_field_still_shares() -> None:
    newer = _obj(ref=_reference(), label=STRING, size=INT)
    older = _obj(ref=_reference(), label=STRING)  # no size yet
    spec, shapes, defs = _plan(a=newer, b=newer, older=older)
    assert spec["older"].core_type == CORE + "Holder"
    assert set(shapes.node_for(defs, CORE + "Holder").properties) == {"ref", "label", "size"}


def test_the_parents_of_an_unshared_copy_are_unshared_too() -> None:
    def holder(**ref_name: Any) -> dict[str, Any]:
        return _obj(ref=_reference(**ref_name), label=STRING, size=INT)

    spec, shapes, _ = _plan(a=holder(), b=holder(), strict=holder(maxLength=3))
    assert spec["a"].core_type == CORE + "Holder"
    assert spec["strict"].core_type is None
    assert spec["strict"].properties["ref"].core_type is None
    assert shapes.unshared == {CORE + "Holder": 1, CORE + "Reference": 1}


def test_unshared_copies_are_named_after_the_kubernetes_type_in_their_kind() -> None:
    def holder(**ref_name: Any) -> dict[str, Any]:
        return _obj(ref=_reference(**ref_name), label=STRING, size=INT)

    defs = _defs()
    root = parse_schema(_obj(spec=_obj(a=holder(), b=holder(), template=holder(maxLength=3))))
    recogniser = Recogniser(defs)
    recogniser.annotate(root)
    shapes = reconcile(recogniser.copies, [root])
    core = plan_core(defs, {CORE + "Holder", CORE + "Reference"}, shapes)
    reserved = {name for module in core.values() for name in module.classes}
    planner = FamilyPlanner("example.v1", "example.flarekit.dev", "v1", reserved)
    module = planner.plan(
        [("Thing", root)], lambda node: ("core.v1", node.core_type.rsplit(".", 1)[1]), []
    )
    spec_fields = {f.json_name: f.annotation for f in module.classes["ThingSpec"].fields}
    # "template" and "ref" are generic roles: the classes are named after the types they
    # copy, qualified (by the kind, or by the parent) since the plain names are the shared ones.
    assert spec_fields["template"] == "ThingHolder | None"
    assert spec_fields["a"] == "Holder | None"
    template = {f.json_name: f.annotation for f in module.classes["ThingHolder"].fields}
    assert template["ref"] == "ThingHolderReference | None"
