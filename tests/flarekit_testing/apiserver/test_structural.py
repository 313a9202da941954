"""Custom-resource admission: pruning, defaulting and validation as the API server does it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from flarekit_testing.apiserver._errors import Cause, invalid_message
from flarekit_testing.apiserver._structural import AdmissionResult, admit

SHARED = Path(__file__).resolve().parents[3].parent / "shared"


def spec_schema(**props: Any) -> dict[str, Any]:
    """A root schema with ``spec`` holding ``props``."""
    return {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": props},
        },
    }


def obj(spec: Any = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "x.io/v1", "kind": "Thing", "metadata": {"name": "t"}}
    if spec is not None:
        out["spec"] = spec
    out.update(extra)
    return out


def causes(result: AdmissionResult) -> list[tuple[str, str, str]]:
    return [(c.reason, c.field, c.message) for c in result.causes]


# --- types ---------------------------------------------------------------------------------


def test_integer_rejects_string_with_apiserver_wording() -> None:
    r = admit(obj({"replicas": "string"}), spec_schema(replicas={"type": "integer"}))
    assert causes(r) == [
        (
            "FieldValueTypeInvalid",
            "spec.replicas",
            'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        )
    ]


@pytest.mark.parametrize(
    ("typ", "value", "ok"),
    [
        ("integer", 3, True),
        ("integer", 2.0, True),  # a JSON number with an integral value is an integer
        ("integer", 2.5, False),
        ("integer", True, False),
        ("integer", 2**70, False),  # beyond int64 the API server sees a float
        ("number", 3, True),
        ("number", 2.5, True),
        ("number", "1", False),
        ("string", "a", True),
        ("string", 1, False),
        ("boolean", False, True),
        ("boolean", "true", False),
        ("array", [1], True),
        ("array", {"a": 1}, False),
        ("object", {}, True),
        ("object", [], False),
    ],
)
def test_types(typ: str, value: Any, ok: bool) -> None:
    r = admit(obj({"v": value}), spec_schema(v={"type": typ}))
    assert r.ok is ok, causes(r)
    if not ok:
        assert r.causes[0].reason == "FieldValueTypeInvalid"
        assert f"spec.v in body must be of type {typ}" in r.causes[0].message


def test_type_error_names_the_type_it_got() -> None:
    r = admit(obj({"v": 2.5}), spec_schema(v={"type": "integer"}))
    assert r.causes[0].message.endswith('must be of type integer: "number"')


def test_nullable_allows_null_and_non_nullable_null_is_dropped() -> None:
    schema = spec_schema(a={"type": "string", "nullable": True}, b={"type": "string"})
    r = admit(obj({"a": None, "b": None}), schema)
    assert r.ok
    assert r.obj["spec"] == {"a": None}  # upstream prunes non-nullable nulls without default


def test_null_array_item_is_a_type_error() -> None:
    schema = spec_schema(l={"type": "array", "items": {"type": "string"}})
    r = admit(obj({"l": ["a", None]}), schema)
    assert causes(r) == [
        (
            "FieldValueTypeInvalid",
            "spec.l[1]",
            'Invalid value: "null": spec.l[1] in body must be of type string: "null"',
        )
    ]


def test_required() -> None:
    props = {"x": {"type": "integer"}, "y": {"type": "integer"}}
    schema = spec_schema(a={"type": "object", "required": ["x", "y"], "properties": props})
    r = admit(obj({"a": {"y": 1}}), schema)
    assert causes(r) == [("FieldValueRequired", "spec.a.x", "Required value")]


def test_required_at_root() -> None:
    schema = spec_schema()
    schema["required"] = ["spec"]
    assert causes(admit(obj(), schema)) == [("FieldValueRequired", "spec", "Required value")]


def test_enum() -> None:
    schema = spec_schema(mode={"type": "string", "enum": ["a", "b"]}, n={"enum": [1, 2]})
    r = admit(obj({"mode": "c", "n": 3}), schema)
    assert causes(r) == [
        (
            "FieldValueNotSupported",
            "spec.mode",
            'Unsupported value: "c": supported values: "a", "b"',
        ),
        ("FieldValueNotSupported", "spec.n", 'Unsupported value: 3: supported values: "1", "2"'),
    ]
    assert admit(obj({"mode": "b", "n": 2}), schema).ok


def test_pattern_with_re2_inline_flag_and_end_anchor() -> None:
    schema = spec_schema(
        n={"type": "string", "pattern": "^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$"},
    )
    assert admit(obj({"n": "Abc-1"}), schema).ok
    r = admit(obj({"n": "abc\n"}), schema)  # Go's $ does not match before a final newline
    assert causes(r) == [
        (
            "FieldValueInvalid",
            "spec.n",
            'Invalid value: "abc\\n": spec.n in body should match '
            "'^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$'",
        )
    ]


def test_pattern_is_unanchored_search_like_go() -> None:
    schema = spec_schema(n={"type": "string", "pattern": "[0-9]"})
    assert admit(obj({"n": "abc1def"}), schema).ok
    assert not admit(obj({"n": "abc"}), schema).ok


# --- formats -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("date-time", "2024-05-01T10:20:30Z", "yesterday"),
        ("date-time", "2024-05-01T10:20:30.123+02:00", "2024-13-01T10:20:30Z"),
        ("date", "2024-05-01", "2024-5-1"),
        ("byte", "aGVsbG8=", "not base64!"),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123"),
        ("ipv4", "10.0.0.1", "10.0.0.256"),
        ("cidr", "10.0.0.0/8", "10.0.0.0"),
        ("duration", "1h30m", "soon"),
    ],
)
def test_string_formats(fmt: str, good: str, bad: str) -> None:
    schema = spec_schema(v={"type": "string", "format": fmt})
    assert admit(obj({"v": good}), schema).ok
    r = admit(obj({"v": bad}), schema)
    assert causes(r) == [
        (
            "FieldValueTypeInvalid",
            "spec.v",
            f"Invalid value: {bad!r}: spec.v in body must be of type {fmt}: {bad!r}".replace(
                "'", '"'
            ),
        )
    ]


def test_unknown_format_is_ignored() -> None:
    assert admit(obj({"v": "anything"}), spec_schema(v={"type": "string", "format": "x"})).ok


@pytest.mark.parametrize(
    ("prop", "value", "ok"),
    [
        ({"type": "integer", "format": "int32"}, 2**31 - 1, True),
        ({"type": "integer", "format": "int32"}, 2**31, False),
        ({"type": "integer", "format": "int32"}, -(2**31) - 1, False),
        ({"type": "integer", "format": "int32"}, 2147483648.0, False),
        ({"type": "integer", "format": "int64"}, 2**63 - 1, True),
        ({"type": "number", "format": "float"}, 3.4e38, True),
        ({"type": "number", "format": "float"}, 3.5e38, False),
        ({"type": "number", "format": "int32"}, 2**31, True),  # upstream drops that format
    ],
)
def test_numbers_outside_their_format_are_refused_as_the_api_server_words_it(
    prop: dict[str, Any], value: float, ok: bool
) -> None:
    """As measured on kube-apiserver: the cause names no field ("<nil>"), its message does."""
    r = admit(obj({"v": value}), spec_schema(v=prop))
    assert r.ok is ok, causes(r)
    if not ok:
        kind = "integer" if prop["type"] == "integer" else "number"
        assert causes(r) == [
            (
                "FieldValueInvalid",
                "<nil>",
                f'Invalid value: "": Checked value must be of type {kind} with format '
                f"{prop['format']} in spec.v",
            )
        ]


def test_float_for_int32_reports_the_format() -> None:
    r = admit(obj({"v": 1.5}), spec_schema(v={"type": "integer", "format": "int32"}))
    assert r.causes[0].message.endswith('spec.v in body must be of type int32: "float64"')


# --- bounds and sizes -----------------------------------------------------------------------


def test_numeric_bounds() -> None:
    schema = spec_schema(
        a={"type": "integer", "minimum": 1, "maximum": 10},
        b={"type": "number", "minimum": 0, "exclusiveMinimum": True},
        c={"type": "integer", "maximum": 5, "exclusiveMaximum": True},
        d={"type": "integer", "multipleOf": 3},
    )
    r = admit(obj({"a": 11, "b": 0, "c": 5, "d": 4}), schema)
    assert causes(r) == [
        (
            "FieldValueInvalid",
            "spec.a",
            "Invalid value: 11: spec.a in body should be less than or equal to 10",
        ),
        (
            "FieldValueInvalid",
            "spec.b",
            "Invalid value: 0: spec.b in body should be greater than 0",
        ),
        ("FieldValueInvalid", "spec.c", "Invalid value: 5: spec.c in body should be less than 5"),
        (
            "FieldValueInvalid",
            "spec.d",
            "Invalid value: 4: spec.d in body should be a multiple of 3",
        ),
    ]
    r = admit(obj({"a": 0, "b": 0.5, "c": 4, "d": 9}), schema)
    assert causes(r) == [
        (
            "FieldValueInvalid",
            "spec.a",
            "Invalid value: 0: spec.a in body should be greater than or equal to 1",
        )
    ]


def test_string_lengths() -> None:
    schema = spec_schema(s={"type": "string", "minLength": 2, "maxLength": 3})
    assert admit(obj({"s": "ab"}), schema).ok
    assert causes(admit(obj({"s": "a"}), schema)) == [
        (
            "FieldValueInvalid",
            "spec.s",
            'Invalid value: "a": spec.s in body should be at least 2 chars long',
        )
    ]
    assert causes(admit(obj({"s": "abcd"}), schema)) == [
        ("FieldValueTooLong", "spec.s", "Too long: value is too long")
    ]
    assert admit(obj({"s": "äöü"}), schema).ok  # counted in characters, not bytes


def test_item_and_property_counts_and_unique_items() -> None:
    schema = spec_schema(
        l={"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 3},
        u={"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
        m={
            "type": "object",
            "additionalProperties": {"type": "string"},
            "minProperties": 1,
            "maxProperties": 2,
        },
    )
    assert admit(obj({"l": [1, 2], "u": [1, 2], "m": {"a": "1"}}), schema).ok
    r = admit(obj({"l": [1], "u": [1, 1], "m": {}}), schema)
    assert causes(r) == [
        (
            "FieldValueInvalid",
            "spec.l",
            "Invalid value: 1: spec.l in body should have at least 2 items",
        ),
        (
            "FieldValueInvalid",
            "spec.u",
            'Invalid value: "": spec.u in body shouldn\'t contain duplicates',
        ),
        (
            "FieldValueInvalid",
            "spec.m",
            "Invalid value: 0: spec.m in body should have at least 1 properties",
        ),
    ]
    r = admit(obj({"l": [1, 2, 3, 4], "m": {"a": "1", "b": "2", "c": "3"}}), schema)
    assert causes(r) == [
        ("FieldValueTooMany", "spec.l", "Too many: 4: has too many items"),
        ("FieldValueTooMany", "spec.m", "Too many: 3: has too many items"),
    ]


# --- additionalProperties, int-or-string, combinators ---------------------------------------


def test_additional_properties_schema_validates_values_and_prunes_inside() -> None:
    schema = spec_schema(
        m={
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "properties": {"size": {"type": "integer"}},
            },
        }
    )
    r = admit(obj({"m": {"a": {"size": "big", "junk": 1}}}), schema)
    assert [c.field for c in r.causes] == ["spec.m.a.size"]
    assert r.unknown_fields == ["spec.m.a.junk"]


def test_int_or_string() -> None:
    schema = spec_schema(
        p={
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "x-kubernetes-int-or-string": True,
        }
    )
    assert admit(obj({"p": 8080}), schema).ok
    assert admit(obj({"p": "http"}), schema).ok
    r = admit(obj({"p": True}), schema)
    assert causes(r)[:2] == [
        (
            "FieldValueTypeInvalid",
            "spec.p",
            'Invalid value: "boolean": spec.p in body must be of type integer,string: "boolean"',
        ),
        (
            "FieldValueInvalid",
            "<nil>",
            'Invalid value: "": "spec.p" must validate at least one schema (anyOf)',
        ),
    ]


def test_all_of_one_of_not() -> None:
    schema = spec_schema(
        a={"type": "integer", "allOf": [{"minimum": 1}, {"maximum": 5}]},
        o={"type": "integer", "oneOf": [{"minimum": 1}, {"minimum": 3}]},
        n={"type": "string", "not": {"enum": ["forbidden"]}},
    )
    assert admit(obj({"a": 3, "o": 2, "n": "fine"}), schema).ok
    r = admit(obj({"a": 9, "o": 4, "n": "forbidden"}), schema)
    messages = [c.message for c in r.causes]
    assert 'Invalid value: "": "spec.a" must validate all the schemas (allOf)' in messages
    assert "Invalid value: 9: spec.a in body should be less than or equal to 5" in messages
    assert any('"spec.o" must validate one and only one schema (oneOf)' in m for m in messages)
    assert 'Invalid value: "": "spec.n" must not validate the schema (not)' in messages


# --- pruning -------------------------------------------------------------------------------


def test_unknown_fields_are_pruned_and_listed_sorted() -> None:
    schema = spec_schema(
        items={
            "type": "array",
            "items": {"type": "object", "properties": {"name": {"type": "string"}}},
        }
    )
    source = obj({"items": [{"name": "a", "x": 1}, {"name": "b"}], "zzz": 1}, status={"s": 1})
    r = admit(source, schema)
    assert r.ok
    assert r.unknown_fields == ["spec.items[0].x", "spec.zzz", "status"]
    assert r.obj["spec"] == {"items": [{"name": "a"}, {"name": "b"}]}
    assert "status" not in r.obj
    assert source["spec"]["zzz"] == 1  # the input is left alone


def test_root_type_and_object_meta_are_never_pruned() -> None:
    r = admit(
        {"apiVersion": "x.io/v1", "kind": "T", "metadata": {"name": "a", "labels": {"k": "v"}}},
        {"type": "object"},
    )
    assert r.obj == {
        "apiVersion": "x.io/v1",
        "kind": "T",
        "metadata": {"name": "a", "labels": {"k": "v"}},
    }
    assert r.unknown_fields == []


def test_unknown_object_meta_fields_are_dropped_like_decoding_does() -> None:
    r = admit(obj(metadata={"name": "a", "colour": "red"}), spec_schema())
    assert r.unknown_fields == ["metadata.colour"]
    assert r.obj["metadata"] == {"name": "a"}


def test_preserve_unknown_fields_keeps_nested_unknowns_but_prunes_declared_properties() -> None:
    schema = spec_schema(
        cfg={
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {
                "known": {"type": "object", "properties": {"a": {"type": "integer"}}},
            },
        }
    )
    source = {"free": {"deep": {"er": [1, {"x": 2}]}}, "known": {"a": 1, "b": 2}}
    r = admit(obj({"cfg": source}), schema)
    assert r.obj["spec"]["cfg"] == {"free": {"deep": {"er": [1, {"x": 2}]}}, "known": {"a": 1}}
    assert r.unknown_fields == ["spec.cfg.known.b"]


# --- embedded resources --------------------------------------------------------------------

EMBEDDED = spec_schema(
    template={
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
    },
    strict={
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "properties": {"spec": {"type": "object", "properties": {"a": {"type": "integer"}}}},
    },
)


def test_embedded_resource_keeps_type_meta_and_coerces_metadata() -> None:
    template = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "bogus": 1, "creationTimestamp": None},
        "data": {"k": "v"},
    }
    strict = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"a": 1, "b": 2},
    }
    r = admit(obj({"template": template, "strict": strict}), EMBEDDED)
    assert r.ok, causes(r)
    assert r.obj["spec"]["template"] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm"},
        "data": {"k": "v"},
    }
    assert r.obj["spec"]["strict"]["spec"] == {"a": 1}
    assert r.unknown_fields == ["spec.strict.spec.b", "spec.template.metadata.bogus"]


def test_embedded_resource_requires_api_version_and_kind() -> None:
    r = admit(obj({"template": {"metadata": {"name": "a/b"}}}), EMBEDDED)
    assert causes(r) == [
        ("FieldValueRequired", "spec.template.apiVersion", "Required value"),
        ("FieldValueRequired", "spec.template.kind", "Required value"),
        (
            "FieldValueInvalid",
            "spec.template.metadata.name",
            "Invalid value: \"a/b\": may not contain '/'",
        ),
    ]


def test_embedded_kind_must_look_like_a_kind() -> None:
    r = admit(obj({"template": {"apiVersion": "a/b/c", "kind": "Not A Kind"}}), EMBEDDED)
    assert [c.field for c in r.causes] == ["spec.template.apiVersion", "spec.template.kind"]
    assert "unexpected GroupVersion string: a/b/c" in r.causes[0].message
    assert "may have mixed case, but should otherwise match" in r.causes[1].message


# --- list types ----------------------------------------------------------------------------


def test_list_set_duplicates() -> None:
    schema = spec_schema(
        s={"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        n={"type": "array", "items": {}, "x-kubernetes-list-type": "set"},
    )
    r = admit(obj({"s": ["a", "b", "a", "a"], "n": [1, True, 1.5]}), schema)
    assert causes(r) == [("FieldValueDuplicate", "spec.s[2]", 'Duplicate value: "a"')]


def test_list_map_duplicates_after_defaulting_keys() -> None:
    port = {
        "type": "object",
        "required": ["containerPort"],
        "properties": {
            "containerPort": {"type": "integer"},
            "protocol": {"type": "string", "default": "TCP"},
        },
    }
    schema = spec_schema(
        ports={
            "type": "array",
            "items": port,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
        }
    )
    ok = admit(
        obj({"ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"}]}), schema
    )
    assert ok.ok
    r = admit(
        obj({"ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "TCP"}]}), schema
    )
    assert causes(r) == [
        (
            "FieldValueDuplicate",
            "spec.ports[1]",
            'Duplicate value: {"containerPort":80,"protocol":"TCP"}',
        )
    ]


def test_list_map_paths_use_brackets_for_map_keys() -> None:
    schema = spec_schema(
        groups={
            "type": "object",
            "additionalProperties": {
                "type": "array",
                "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
            },
        }
    )
    r = admit(obj({"groups": {"g1": [{"name": "a"}, {"name": "a"}]}}), schema)
    assert causes(r) == [
        ("FieldValueDuplicate", "spec.groups[g1][1]", 'Duplicate value: {"name":"a"}')
    ]


# --- defaulting ----------------------------------------------------------------------------


def test_defaults_apply_where_absent_and_are_copies() -> None:
    schema = spec_schema(
        opts={"type": "object", "default": {"tags": []}, "properties": {"tags": {"type": "array"}}},
        replicas={"type": "integer", "default": 1},
    )
    first = admit(obj({}), schema)
    second = admit(obj({}), schema)
    assert first.obj["spec"] == {"opts": {"tags": []}, "replicas": 1}
    first.obj["spec"]["opts"]["tags"].append("x")
    assert second.obj["spec"]["opts"]["tags"] == []
    assert admit(obj({"replicas": 3}), schema).obj["spec"]["replicas"] == 3


def test_defaults_inside_items_additional_properties_and_defaulted_objects() -> None:
    item = {"type": "object", "properties": {"w": {"type": "integer", "default": 7}}}
    schema = spec_schema(
        list={"type": "array", "items": item},
        map={"type": "object", "additionalProperties": item},
        made={
            "type": "object",
            "default": {},
            "properties": {"inner": {"type": "string", "default": "in"}},
        },
    )
    r = admit(obj({"list": [{}, {"w": 1}], "map": {"a": {}}}), schema)
    assert r.obj["spec"] == {
        "list": [{"w": 7}, {"w": 1}],
        "map": {"a": {"w": 7}},
        "made": {"inner": "in"},
    }


def test_defaults_under_an_absent_parent_are_not_applied() -> None:
    schema = spec_schema(
        parent={"type": "object", "properties": {"x": {"type": "integer", "default": 5}}}
    )
    assert admit(obj({}), schema).obj["spec"] == {}
    assert admit(obj({"parent": {}}), schema).obj["spec"] == {"parent": {"x": 5}}


def test_non_nullable_null_takes_the_default() -> None:
    schema = spec_schema(x={"type": "integer", "default": 5})
    assert admit(obj({"x": None}), schema).obj["spec"] == {"x": 5}


def test_pruning_happens_before_defaulting_and_validation() -> None:
    schema = spec_schema(a={"type": "object", "default": {"unknown": 1}, "properties": {}})
    r = admit(obj({}), schema)  # defaults are not pruned again (upstream prunes them at CRD time)
    assert r.obj["spec"] == {"a": {"unknown": 1}}


# --- metadata ------------------------------------------------------------------------------


def test_name_must_be_a_dns_subdomain() -> None:
    r = admit(obj(metadata={"name": "Bad_Name"}), spec_schema())
    assert r.causes == [
        Cause(
            reason="FieldValueInvalid",
            field="metadata.name",
            message='Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case '
            "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
            "character (e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        )
    ]


def test_name_or_generate_name_required_and_labels_checked() -> None:
    r = admit(obj(metadata={"generateName": "job-", "labels": {"ok": "bad value"}}), spec_schema())
    assert [c.field for c in r.causes] == ["metadata.name", "metadata.labels"]
    assert r.causes[0].message == "Required value: name or generateName is required"
    too_long = admit(obj(metadata={"name": "a" * 254}), spec_schema())
    assert "must be no more than 253 characters" in too_long.causes[0].message


def test_metadata_schema_constraints_from_the_crd_apply() -> None:
    schema = spec_schema()
    schema["properties"]["metadata"] = {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 5}},
    }
    r = admit(obj(metadata={"name": "toolong"}), schema)
    assert causes(r) == [("FieldValueTooLong", "metadata.name", "Too long: value is too long")]


def test_invalid_message_aggregates_like_the_api_server() -> None:
    one = [Cause(reason="FieldValueRequired", field="spec.a", message="Required value")]
    assert (
        invalid_message("RayCluster", "ray.io", "demo", one)
        == 'RayCluster.ray.io "demo" is invalid: spec.a: Required value'
    )
    two = [*one, Cause(reason="FieldValueInvalid", field="spec.b", message="Invalid value: 1: bad")]
    assert invalid_message("Thing", "", "t", two) == (
        'Thing "t" is invalid: [spec.a: Required value, spec.b: Invalid value: 1: bad]'
    )


def test_x_kubernetes_validations_are_not_evaluated() -> None:
    schema = spec_schema(a={"type": "integer", "x-kubernetes-validations": [{"rule": "self > 5"}]})
    assert admit(obj({"a": 1}), schema).ok


# --- real CRDs -----------------------------------------------------------------------------


def _newest(family: str, file: str) -> Path:
    tags = sorted(
        (p for p in (SHARED / "schemas" / family).iterdir() if (p / file).exists()),
        key=lambda p: tuple(int(x) for x in p.name.lstrip("v").split(".")),
    )
    return tags[-1] / file


@pytest.fixture(scope="module")
def raycluster_schema() -> dict[str, Any]:
    if not (SHARED / "schemas" / "kuberay").is_dir():
        pytest.skip("shared upstream schemas are not available")
    with _newest("kuberay", "ray.io_rayclusters.yaml").open() as f:
        crd = yaml.load(f, Loader=yaml.CSafeLoader)
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1" and v["served"])
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


@pytest.fixture(scope="module")
def raycluster_sample() -> dict[str, Any]:
    path = (
        SHARED
        / "samples/ray.io/v1/RayCluster"
        / "kuberay--ray-operator-config-samples-ray-cluster-autoscaler-v2-yaml--0.yaml"
    )
    if not path.exists():
        pytest.skip("shared samples are not available")
    with path.open() as f:
        sample: dict[str, Any] = yaml.load(f, Loader=yaml.CSafeLoader)
    return sample


def test_real_raycluster_sample_is_valid(
    raycluster_schema: dict[str, Any], raycluster_sample: dict[str, Any]
) -> None:
    r = admit(raycluster_sample, raycluster_schema)
    assert r.causes == []
    assert r.unknown_fields == []
    assert r.obj["spec"]["workerGroupSpecs"][0]["numOfHosts"] == 1  # CRD default applied


def test_real_raycluster_bad_replicas(
    raycluster_schema: dict[str, Any], raycluster_sample: dict[str, Any]
) -> None:
    bad = copy.deepcopy(raycluster_sample)
    bad["spec"]["workerGroupSpecs"][0]["replicas"] = "x"
    r = admit(bad, raycluster_schema)
    assert [(c.reason, c.field) for c in r.causes] == [
        ("FieldValueTypeInvalid", "spec.workerGroupSpecs[0].replicas")
    ]


def test_real_raycluster_unknown_container_field_is_pruned(
    raycluster_schema: dict[str, Any], raycluster_sample: dict[str, Any]
) -> None:
    odd = copy.deepcopy(raycluster_sample)
    odd["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["imageTypo"] = "x"
    r = admit(odd, raycluster_schema)
    assert r.ok
    path = "spec.headGroupSpec.template.spec.containers[0].imageTypo"
    assert r.unknown_fields == [path]
    assert "imageTypo" not in r.obj["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]


def test_real_raycluster_duplicate_container_port_key(
    raycluster_schema: dict[str, Any], raycluster_sample: dict[str, Any]
) -> None:
    dup = copy.deepcopy(raycluster_sample)
    ports = dup["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"]
    ports.append({"containerPort": ports[0]["containerPort"], "name": "again"})
    r = admit(dup, raycluster_schema)
    assert [c.reason for c in r.causes] == ["FieldValueDuplicate"]
    assert r.causes[0].field.endswith(f"containers[0].ports[{len(ports) - 1}]")
