"""Parsing CRD documents and their schemas into the intermediate model.

What structural schemas allow is read faithfully; anything else fails loudly with
the schema path, so that a new upstream keyword is noticed at generation time.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from small_package import FIXTURE_CRDS, fixture_doc

from flarekit_generator.ir import Node
from flarekit_generator.parse import SchemaError, parse_crd, parse_schema

STRING = {"type": "string"}


def _obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def _crd(doc: dict[str, Any], source: str = "fixtures/x.yaml") -> Any:
    return parse_crd(doc, family="widgets", release="v1.1.0", source_path=source, sha256="0" * 64)


# --------------------------------------------------------------------------- schema shapes
@pytest.mark.parametrize(
    ("schema", "shape"),
    [
        (_obj(a=STRING), "object"),
        ({"properties": {"a": STRING}}, "object"),
        ({"type": "object", "additionalProperties": STRING}, "map"),
        ({"type": "object"}, "free"),
        ({"type": "object", "properties": {}}, "free"),
        ({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, "free"),
        ({"type": "object", "additionalProperties": True}, "free"),
        ({"type": "array", "items": STRING}, "array"),
        ({"type": "string"}, "string"),
        ({"type": "integer"}, "integer"),
        ({"type": "number"}, "number"),
        ({"type": "boolean"}, "boolean"),
        ({"x-kubernetes-int-or-string": True}, "int-or-string"),
        ({"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}]}, "int-or-string"),
        ({}, "any"),
        ({"x-kubernetes-preserve-unknown-fields": True}, "any"),
    ],
)
def test_shapes(schema: dict[str, Any], shape: str) -> None:
    assert parse_schema(schema).shape == shape


def test_children_of_objects_arrays_and_maps() -> None:
    node = parse_schema(
        _obj(
            tags={"type": "array", "items": STRING},
            anything={"type": "array"},
            labels={"type": "object", "additionalProperties": {"type": "integer"}},
        )
    )
    assert node.properties["tags"].items == Node(shape="string")
    assert node.properties["anything"].items == Node(shape="any")
    assert node.properties["labels"].values == Node(shape="integer")


def test_constraints_are_read() -> None:
    node = parse_schema(
        {
            "type": "integer",
            "format": "int32",
            "minimum": 1,
            "maximum": 10,
            "exclusiveMinimum": True,
            "enum": [1, 2, 3],
            "nullable": True,
            "description": "  Padded text.  ",
        }
    )
    assert (node.format, node.minimum, node.maximum) == ("int32", 1, 10)
    assert node.exclusive_minimum and not node.exclusive_maximum
    assert node.enum == (1, 2, 3)
    assert node.nullable
    assert node.description == "Padded text."
    text = parse_schema({"type": "string", "pattern": "^a+$", "minLength": 1, "maxLength": 3})
    assert (text.pattern, text.min_length, text.max_length) == ("^a+$", 1, 3)
    items = parse_schema({"type": "array", "items": STRING, "minItems": 1, "maxItems": 2})
    assert (items.min_items, items.max_items) == (1, 2)
    props = parse_schema(
        {"type": "object", "additionalProperties": STRING, "minProperties": 1, "maxProperties": 5}
    )
    assert (props.min_properties, props.max_properties) == (1, 5)


def test_required_is_sorted() -> None:
    assert parse_schema({**_obj(b=STRING, a=STRING), "required": ["b", "a"]}).required == (
        "a",
        "b",
    )


@pytest.mark.parametrize("default", [0, False, "", None, [], {"a": 1}])
def test_any_default_is_recorded_even_a_falsy_one(default: Any) -> None:
    node = parse_schema({"type": "string", "default": default})
    assert node.has_default and node.default == default
    assert not parse_schema({"type": "string"}).has_default


def test_kubernetes_extensions_are_read() -> None:
    listed = parse_schema(
        {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name", "protocol"],
            "items": _obj(name=STRING, protocol=STRING),
        }
    )
    assert (listed.list_type, listed.list_map_keys) == ("map", ("name", "protocol"))
    mapped = parse_schema(
        {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": STRING}
    )
    assert mapped.map_type == "atomic"
    embedded = parse_schema(
        {
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "x-kubernetes-preserve-unknown-fields": True,
        }
    )
    assert embedded.embedded_resource and embedded.preserve_unknown
    rules = [{"rule": "self.a > 0", "message": "a must be positive"}, {"rule": "has(self.b)"}]
    validated = parse_schema({**_obj(a=STRING), "x-kubernetes-validations": rules})
    assert validated.validations == tuple(rules)


def test_wording_does_not_change_structure_but_constraints_do() -> None:
    first = parse_schema({**_obj(a={"type": "integer"}), "description": "One wording."})
    second = parse_schema({**_obj(a={"type": "integer", "description": "x"}), "title": "T"})
    assert first.digest() == second.digest()
    bounded = parse_schema(_obj(a={"type": "integer", "maximum": 3}))
    assert bounded.digest() != first.digest()


# --------------------------------------------------------------------------- rejections
@pytest.mark.parametrize(
    ("schema", "path", "keyword"),
    [
        ({"type": "object", "$ref": "#/x"}, "<root>", "$ref"),
        (_obj(spec=_obj(size={"type": "integer", "multipleOf": 2})), "spec.size", "multipleOf"),
        (
            _obj(spec=_obj(tags={"type": "array", "items": {"type": "string", "const": "a"}})),
            "spec.tags[]",
            "const",
        ),
        (
            _obj(
                labels={
                    "type": "object",
                    "additionalProperties": {"type": "string", "x-kubernetes-new": True},
                }
            ),
            "labels{}",
            "x-kubernetes-new",
        ),
    ],
)
def test_unknown_keywords_are_rejected_naming_the_path(
    schema: dict[str, Any], path: str, keyword: str
) -> None:
    with pytest.raises(SchemaError) as error:
        parse_schema(schema)
    assert str(error.value) == f"{path}: unsupported schema keywords [{keyword!r}]"


@pytest.mark.parametrize("kind", ["null", ["string", "null"], "file"])
def test_unknown_types_are_rejected_naming_the_path(kind: Any) -> None:
    with pytest.raises(SchemaError, match=r"^spec\.when: unsupported type "):
        parse_schema(_obj(spec=_obj(when={"type": kind})))


def test_tuple_items_are_rejected_naming_the_path() -> None:
    with pytest.raises(SchemaError, match=r"spec\.pair"):
        parse_schema(_obj(spec=_obj(pair={"type": "array", "items": [STRING, STRING]})))


# --------------------------------------------------------------------------- CRD documents
def test_every_fixture_version_parses() -> None:
    for name, family, release in FIXTURE_CRDS:
        crd = parse_crd(
            fixture_doc(name), family=family, release=release, source_path=name, sha256="0" * 64
        )
        for version in crd.versions:
            parse_schema(version.raw_schema)


def test_namespaced_crd_with_versions_and_subresources() -> None:
    crd = _crd(fixture_doc("widgets-v1.1.0.yaml"))
    assert (crd.group, crd.kind, crd.plural, crd.singular) == (
        "example.flarekit.dev",
        "Widget",
        "widgets",
        "widget",
    )
    assert (crd.list_kind, crd.short_names, crd.categories) == (
        "WidgetList",
        ("wd",),
        ("examples",),
    )
    assert crd.namespaced and crd.release_id == "widgets@v1.1.0"
    v1, v1beta1, v1alpha1 = crd.versions
    assert (v1.name, v1.served, v1.storage, v1.deprecated) == ("v1", True, True, False)
    assert v1.subresources == ("scale", "status")
    assert (v1beta1.served, v1beta1.storage, v1beta1.deprecated) == (True, False, True)
    assert (
        v1beta1.deprecation_warning == "example.flarekit.dev/v1beta1 Widget is deprecated; use v1"
    )
    assert v1beta1.subresources == ()
    assert (v1alpha1.served, v1alpha1.storage) == (False, False)


def test_cluster_crd_with_defaulted_names() -> None:
    crd = _crd(fixture_doc("gadgets-v0.3.0.yaml"))
    assert not crd.namespaced
    assert (crd.singular, crd.list_kind, crd.short_names, crd.categories) == (
        "gadget",
        "GadgetList",
        (),
        (),
    )


def test_a_version_without_schema_is_free_form() -> None:
    doc = copy.deepcopy(fixture_doc("gadgets-v0.3.0.yaml"))
    del doc["spec"]["versions"][0]["schema"]
    (version,) = _crd(doc).versions
    assert version.raw_schema == {"type": "object"}
    assert parse_schema(version.raw_schema).shape == "free"


def test_other_documents_are_rejected_naming_the_file() -> None:
    with pytest.raises(SchemaError, match=r"^fixtures/x\.yaml: not a CustomResourceDefinition"):
        _crd({"apiVersion": "v1", "kind": "ConfigMap"})


@pytest.mark.parametrize("missing", ["names", "plural", "group", "versions"])
def test_incomplete_crds_are_rejected_naming_file_and_path(missing: str) -> None:
    doc = copy.deepcopy(fixture_doc("gadgets-v0.3.0.yaml"))
    if missing == "plural":
        del doc["spec"]["names"]["plural"]
    else:
        del doc["spec"][missing]
    with pytest.raises(SchemaError, match=rf"^fixtures/x\.yaml: .*{missing}"):
        _crd(doc)
