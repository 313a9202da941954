"""How the models generated from the fixture CRDs behave, one schema feature at a time.

Everything runs in the child interpreter of ``small_package.ModelRunner``, against
the package generated from ``fixtures/``. Error locations are compared as the
JSON paths a user wrote (aliases, list indices, map keys), never Python names.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from small_package import JSON, Invalid, ModelRunner

WIDGET = "example.v1.Widget"
GADGET = "example.v1.Gadget"
API_VERSION = "example.flarekit.dev/v1"
QUANTITY_ERROR = "quantity"

#: A Widget that sets every field the fixture schema declares.
FULL_WIDGET: JSON = {
    "apiVersion": API_VERSION,
    "kind": "Widget",
    "metadata": {"name": "w", "namespace": "ns", "labels": {"app": "w"}},
    "spec": {
        "replicas": 3,
        "minReplicas": 1,
        "size": 2**40,
        "count": 7,
        "ratio": 0.5,
        "weight": 2,
        "priority": 9,
        "mode": "Fast",
        "tier": 2,
        "name": "widget-a",
        "startAt": "2024-05-01T10:00:00Z",
        "enabled": False,
        "nickname": None,
        "tags": ["a", "b"],
        "ports": [{"name": "http", "number": 8080}],
        "items": [{"name": "first", "replicas": 2}],
        "labels": {"team": "ml"},
        "selector": {"app": "w"},
        "limits": {"cpu": 2, "memory": "8Gi"},
        "zones": {"east": {"capacity": 4}},
        "port": "http",
        "surge": "25%",
        "cpu": "500m",
        "config": {"anything": [1, "two", {"three": 3.0}]},
        "extra": {"deep": {"deeper": None}},
        "options": {"level": 3, "colour": "blue"},
        "payload": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}},
        "template": {
            "metadata": {"labels": {"app": "w"}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "main",
                        "image": "python:3.11",
                        "args": ["-c", "print(1)"],
                        "ports": [{"containerPort": 8080}],
                        "resources": {"limits": {"cpu": 1, "memory": "1Gi"}},
                    }
                ],
            },
        },
        "livenessCheck": {"path": "/alive", "periodSeconds": 10},
        "readinessCheck": {"path": "/ready"},
        "fooRef": {"name": "foo"},
        "barSettings": {"namespace": "bar"},
        "leader": {"spec": {"size": 1}},
        "follower": {"spec": {"count": 2}},
        "container": {"volume": "data"},
        "quantity": {"amount": 3, "unit": "kg"},
        "from": "here",
        "schema": "v2",
        "json": True,
        "continue": "token",
        "podIPs": ["10.0.0.1", "fd00::1"],
        "hostIPC": False,
        "gain": 0.5,
        "window": {"start": "08:00"},
        "tuning": {"level": 2},
    },
    "status": {
        "phase": "Running",
        "readyReplicas": 3,
        "observedGeneration": 4,
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "AllUp",
                "message": "all copies are up",
                "lastTransitionTime": "2024-05-01T10:00:00Z",
                "observedGeneration": 4,
            }
        ],
    },
}


def widget(**spec: Any) -> JSON:
    """A minimal valid Widget with some spec fields set."""
    return {"apiVersion": API_VERSION, "kind": "Widget", "spec": {"mode": "Fast", **spec}}


def with_value(path: tuple[str | int, ...], value: Any) -> JSON:
    """FULL_WIDGET with the value at a JSON path replaced."""
    data = copy.deepcopy(FULL_WIDGET)
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


# --------------------------------------------------------------------------- round trips
def test_every_field_round_trips_exactly(models: ModelRunner) -> None:
    assert models.load(WIDGET, FULL_WIDGET) == FULL_WIDGET


def test_json_text_round_trips_exactly(models: ModelRunner) -> None:
    text = models.run(
        "result = model(args['m']).model_validate(args['d']).to_json()", m=WIDGET, d=FULL_WIDGET
    )
    loaded = models.run("import json\nresult = json.loads(args['t'])", t=text)
    assert loaded == FULL_WIDGET


def test_construction_by_attribute_name(models: ModelRunner) -> None:
    dumped = models.build(
        "example.v1.WidgetSpec",
        mode="Slow",
        min_replicas=2,
        pod_ips=["10.0.0.1"],
        host_ipc=True,
        from_="a",
        schema_="s",
        json_=False,
        continue_="c",
        liveness_check={"path": "/", "period_seconds": 5},
    )
    assert dumped == {
        "mode": "Slow",
        "minReplicas": 2,
        "podIPs": ["10.0.0.1"],
        "hostIPC": True,
        "from": "a",
        "schema": "s",
        "json": False,
        "continue": "c",
        "livenessCheck": {"path": "/", "periodSeconds": 5},
    }


def test_construction_by_json_alias(models: ModelRunner) -> None:
    data = {"mode": "Slow", "minReplicas": 2, "from": "a", "continue": "c", "podIPs": []}
    assert models.build("example.v1.WidgetSpec", **data) == data


def test_attributes_are_snake_case_python_names(models: ModelRunner) -> None:
    values = models.run(
        "s = model(args['m']).model_validate(args['d']).spec\n"
        "result = [s.from_, s.schema_, s.json_, s.continue_, s.pod_ips, s.host_ipc,"
        " s.min_replicas, s.liveness_check.period_seconds]",
        m=WIDGET,
        d=FULL_WIDGET,
    )
    assert values == ["here", "v2", True, "token", ["10.0.0.1", "fd00::1"], False, 1, 10]


def test_api_version_and_kind_are_always_written(models: ModelRunner) -> None:
    assert models.build(WIDGET) == {"apiVersion": API_VERSION, "kind": "Widget"}


def test_wrong_api_version_or_kind_is_rejected(models: ModelRunner) -> None:
    wrong_version = models.errors(WIDGET, {"apiVersion": "example.flarekit.dev/v1beta1"})
    assert wrong_version.locs == {("apiVersion",)}
    assert models.errors(WIDGET, {"kind": "Gadget"}).locs == {("kind",)}


@pytest.mark.parametrize(
    ("field", "value", "python_type"),
    [
        ("replicas", 3, "int"),
        ("size", 2**63 - 1, "int"),
        ("weight", 2, "int"),
        ("weight", 2.5, "float"),
        ("ratio", 1, "int"),
        ("ratio", 0.25, "float"),
        ("cpu", 2, "int"),
        ("cpu", "500m", "str"),
        ("cpu", "2", "str"),
        ("port", 8080, "int"),
        ("port", "http", "str"),
        ("surge", 3, "int"),
        ("surge", "25%", "str"),
    ],
)
def test_numbers_and_quantities_are_kept_as_given(
    models: ModelRunner, field: str, value: Any, python_type: str
) -> None:
    result = models.run(
        "w = model(args['m']).model_validate(args['d'])\n"
        "v = w.spec.model_dump(by_alias=True)[args['f']]\n"
        "result = [type(v).__name__, w.to_dict()['spec'][args['f']]]",
        m=WIDGET,
        d=widget(**{field: value}),
        f=field,
    )
    assert result == [python_type, value]


def test_defaults_are_never_injected(models: ModelRunner) -> None:
    data = widget(
        template={"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 1}]}]}}
    )
    # replicas (1), enabled (false) and the container port's protocol (TCP) have defaults.
    assert models.load(WIDGET, data) == data
    full_dump = models.run(
        "result = model(args['m']).model_validate(args['d'])"
        ".model_dump(mode='json', by_alias=True, exclude_none=True)",
        m=WIDGET,
        d=data,
    )
    assert "replicas" not in full_dump["spec"] and "enabled" not in full_dump["spec"]


def test_nullable_field_keeps_null(models: ModelRunner) -> None:
    assert models.load(WIDGET, widget(nickname=None))["spec"]["nickname"] is None


# --------------------------------------------------------------------------- unknown fields
UNKNOWN_FIELD_PATHS = [
    pytest.param((), id="root"),
    pytest.param(("metadata",), id="metadata"),
    pytest.param(("spec",), id="spec"),
    pytest.param(("spec", "items", 0), id="list-item"),
    pytest.param(("spec", "ports", 0), id="list-map-item"),
    pytest.param(("spec", "zones", "east"), id="map-value"),
    pytest.param(("spec", "leader", "spec"), id="nested-object"),
    pytest.param(("spec", "livenessCheck"), id="shared-class"),
    pytest.param(("spec", "template"), id="core-pod-template"),
    pytest.param(("spec", "template", "spec", "containers", 0), id="core-container"),
    pytest.param(("spec", "template", "spec", "containers", 0, "resources"), id="core-resources"),
    pytest.param(("status", "conditions", 0), id="meta-condition"),
]


@pytest.mark.parametrize("path", UNKNOWN_FIELD_PATHS)
def test_unknown_fields_are_kept_and_written_back(
    models: ModelRunner, path: tuple[str | int, ...]
) -> None:
    data = copy.deepcopy(FULL_WIDGET)
    target: Any = data
    for key in path:
        target = target[key]
    target["futureField"] = {"nested": [1, "x", {"y": None}], "count": 2}
    target["future_snake"] = 7
    assert models.load(WIDGET, data) == data


def test_unknown_fields_survive_attribute_access_and_edits(models: ModelRunner) -> None:
    data = widget(items=[{"name": "a", "later": True}])
    data["spec"]["alsoLater"] = "x"
    dumped = models.run(
        "w = model(args['m']).model_validate(args['d'])\n"
        "w.spec.items[0].replicas = 5\n"
        "w.spec.mode = 'Slow'\n"
        "result = w.to_dict()",
        m=WIDGET,
        d=data,
    )
    assert dumped["spec"] == {
        "mode": "Slow",
        "alsoLater": "x",
        "items": [{"name": "a", "later": True, "replicas": 5}],
    }


def test_unknown_snake_case_json_keys_are_kept_as_written(models: ModelRunner) -> None:
    # JSON is validated by alias only, so 'min_replicas' is an unknown key; pydantic counts
    # unknown keys as set fields, which must not make the dump add 'minReplicas': null.
    text = '{"spec": {"mode": "Fast", "min_replicas": "not a number"}}'
    dumped = models.run(
        "result = model(args['m']).model_validate_json(args['t']).to_dict()", m=WIDGET, t=text
    )
    assert dumped["spec"] == {"mode": "Fast", "min_replicas": "not a number"}


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({"mode": "Fast", "min_replicas": 3}, id="python-name-only"),
        pytest.param({"mode": "Fast", "minReplicas": None, "min_replicas": 3}, id="both-null"),
        pytest.param({"mode": "Fast", "minReplicas": 2, "min_replicas": 3}, id="both"),
        pytest.param(
            {"mode": "Fast", "items": [{"name": "a", "replicas": 1, "min_replicas": 3}]},
            id="nested",
        ),
    ],
)
def test_a_python_name_as_json_key_never_adds_a_null(models: ModelRunner, spec: JSON) -> None:
    # A merge patch with "stopPolicy": null resets a queue's stop policy: the dump must hold
    # exactly the keys that were read.
    data = widget(**spec)
    data["spec"] = spec
    assert models.load(WIDGET, data) == data
    text = models.run("import json\nresult = json.dumps(args['d'])", d=data)
    assert (
        models.run(
            "result = model(args['m']).model_validate_json(args['t']).to_dict()", m=WIDGET, t=text
        )
        == data
    )


# --------------------------------------------------------------------------- rejections
@pytest.mark.parametrize(
    ("path", "value", "error"),
    [
        (("spec", "replicas"), "2", "int_type"),
        (("spec", "replicas"), 2.0, "int_type"),
        (("spec", "replicas"), True, "int_type"),
        (("spec", "count"), "2", "int_type"),
        (("spec", "name"), 1, "string_type"),
        (("spec", "enabled"), 1, "bool_type"),
        (("spec", "enabled"), "true", "bool_type"),
        (("spec", "tags"), "a", "list_type"),
        (("spec", "labels"), ["a"], "dict_type"),
        (("spec", "labels", "team"), 1, "string_type"),
        (("spec", "mode"), "Medium", "literal_error"),
        (("spec", "tier"), 4, "enum"),
        (("spec", "tier"), "1", "enum"),
        (("spec", "mode"), None, "literal_error"),
        (("status", "phase"), "Lost", "literal_error"),
        (("spec", "name"), "Not_Valid", "string_pattern_mismatch"),
        (("spec", "name"), "", "string_too_short"),
        (("spec", "name"), "a" * 21, "string_too_long"),
        (("spec", "minReplicas"), 2**31, "less_than_equal"),
        (("spec", "minReplicas"), -(2**31) - 1, "greater_than_equal"),
        (("spec", "size"), 2**63, "less_than_equal"),
        (("spec", "replicas"), 101, "less_than_equal"),
        (("spec", "replicas"), -1, "greater_than_equal"),
        (("spec", "priority"), 10, "less_than"),
        (("spec", "priority"), 0, "greater_than_equal"),
        (("spec", "tags"), [], "too_short"),
        (("spec", "tags"), ["a", "b", "c", "d"], "too_long"),
        (("spec", "cpu"), "lots", QUANTITY_ERROR),
        (("spec", "cpu"), 0.5, QUANTITY_ERROR),
        (("spec", "limits", "memory"), "8 GiB", QUANTITY_ERROR),
        (("spec", "port"), 1.5, "int_or_string"),
        (("spec", "items", 0, "replicas"), "2", "int_type"),
        (("spec", "ports", 0, "number"), 2**31, "less_than_equal"),
        (("spec", "zones", "east", "capacity"), "4", "int_type"),
        (("spec", "livenessCheck", "periodSeconds"), "10", "int_type"),
        (("spec", "template", "spec", "restartPolicy"), 1, "string_type"),
        (
            ("spec", "template", "spec", "containers", 0, "resources", "limits", "cpu"),
            "lots",
            QUANTITY_ERROR,
        ),
        (("status", "conditions", 0, "reason"), 5, "string_type"),
    ],
)
def test_bad_values_are_rejected_at_their_json_path(
    models: ModelRunner, path: tuple[str | int, ...], value: Any, error: str
) -> None:
    invalid = models.errors(WIDGET, with_value(path, value))
    assert [(loc, kind) for loc, kind, _ in invalid.errors] == [(path, error)]


@pytest.mark.parametrize("value", [True, 1.0])
def test_integer_enum_is_strict(models: ModelRunner, value: Any) -> None:
    assert models.errors(WIDGET, widget(tier=value)).locs == {("spec", "tier")}


@pytest.mark.parametrize(
    ("data", "loc"),
    [
        pytest.param({"spec": {}}, ("spec", "mode"), id="spec.mode"),
        pytest.param(widget(items=[{"replicas": 1}]), ("spec", "items", 0, "name"), id="item"),
        pytest.param(widget(ports=[{"name": "a"}]), ("spec", "ports", 0, "number"), id="port"),
        pytest.param(
            widget(template={"spec": {"containers": [{"image": "x"}]}}),
            ("spec", "template", "spec", "containers", 0, "name"),
            id="core-container-name",
        ),
    ],
)
def test_missing_required_fields_are_reported_at_their_path(
    models: ModelRunner, data: JSON, loc: tuple[str | int, ...]
) -> None:
    invalid = models.errors(WIDGET, data)
    assert [(e_loc, kind) for e_loc, kind, _ in invalid.errors] == [(loc, "missing")]


def test_required_root_field_of_a_cluster_kind(models: ModelRunner) -> None:
    assert models.errors(GADGET, {"kind": "Gadget"}).errors[0][:2] == (("spec",), "missing")
    bad = models.errors(GADGET, {"spec": {"serial": "ab-1"}})
    assert [e[:2] for e in bad.errors] == [(("spec", "serial"), "string_pattern_mismatch")]
    assert models.load(GADGET, {"spec": {"serial": "AB-1234", "slots": [{"index": 0}]}})


def test_several_errors_are_all_reported(models: ModelRunner) -> None:
    invalid = models.errors(WIDGET, widget(replicas="2", items=[{"name": 1}], mode="Medium"))
    assert invalid.locs == {("spec", "replicas"), ("spec", "items", 0, "name"), ("spec", "mode")}


def test_error_locations_name_the_key_the_caller_used(models: ModelRunner) -> None:
    # JSON in, JSON names out; Python keyword arguments are reported as written.
    by_alias = models.errors("example.v1.WidgetSpec", {"mode": "Fast", "minReplicas": "2"})
    assert by_alias.locs == {("minReplicas",)}
    with pytest.raises(Invalid) as by_name:
        models.build("example.v1.WidgetSpec", mode="Fast", min_replicas="2")
    assert by_name.value.locs == {("min_replicas",)}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("weight", "2"),
        ("weight", True),
        ("ratio", 0),
        ("ratio", True),
        ("ratio", 2),
    ],
)
def test_number_errors_are_at_the_field_path(models: ModelRunner, field: str, value: Any) -> None:
    assert models.errors(WIDGET, widget(**{field: value})).locs == {("spec", field)}


@pytest.mark.parametrize("value", ["lots", 1.5, True])
def test_patterned_int_or_string_errors_are_at_the_field_path(
    models: ModelRunner, value: Any
) -> None:
    assert models.errors(WIDGET, widget(surge=value)).locs == {("spec", "surge")}


@pytest.mark.parametrize("value", ["yesterday", "2024-05-01", 1714557600])
def test_date_time_must_be_rfc3339(models: ModelRunner, value: Any) -> None:
    assert models.errors(WIDGET, widget(startAt=value)).locs == {("spec", "startAt")}
    core = models.errors(
        WIDGET, with_value(("status", "conditions", 0, "lastTransitionTime"), value)
    )
    assert core.locs == {("status", "conditions", 0, "lastTransitionTime")}


@pytest.mark.parametrize(
    "value", ["2024-05-01T10:00:00Z", "2024-05-01T10:00:00.123456+02:00", "2024-05-01t10:00:00z"]
)
def test_date_time_is_kept_as_the_exact_string(models: ModelRunner, value: str) -> None:
    assert models.load(WIDGET, widget(startAt=value))["spec"]["startAt"] == value


# --------------------------------------------------------------------------- API server rules
@pytest.mark.parametrize(
    ("path", "value", "error"),
    [
        (("spec", "count"), 2**63, "less_than_equal"),
        (("spec", "count"), -(2**63) - 1, "greater_than_equal"),
        (("spec", "port"), 2**63, "int64_range"),
        (("spec", "cpu"), 2**63, "int64_range"),
        (("spec", "weight"), 10**400, "finite_number"),
        (("spec", "gain"), 3.5e38, "float32_range"),
        (("status", "readyReplicas"), -1, "scale_subresource"),
        (("spec", "gain"), -(2**200), "float32_range"),
        (("spec", "weight"), float("nan"), "finite_number"),
        (("spec", "weight"), float("inf"), "finite_number"),
        (("spec", "ratio"), float("nan"), "finite_number"),
        (("spec", "gain"), float("-inf"), "finite_number"),
    ],
)
def test_numbers_are_held_to_what_the_api_server_takes(
    models: ModelRunner, path: tuple[str | int, ...], value: Any, error: str
) -> None:
    invalid = models.errors(WIDGET, with_value(path, value))
    assert [(loc, kind) for loc, kind, _ in invalid.errors] == [(path, error)]


def test_float32_bounds_are_inclusive(models: ModelRunner) -> None:
    assert models.load(WIDGET, widget(gain=3.4028234e38))["spec"]["gain"] == 3.4028234e38


def test_numbers_beyond_int64_are_taken_where_the_server_takes_a_float(
    models: ModelRunner,
) -> None:
    # The API server decodes them as float64: a number field and free-form values take them.
    data = widget(weight=2**63, extra={"big": 10**30})
    assert models.load(WIDGET, data) == data


@pytest.mark.parametrize(
    ("where", "value", "loc"),
    [
        (("spec", "config"), {"a": [1, float("nan")]}, ("spec", "config", "a", 1)),
        (("spec", "extra"), {"deep": {"x": float("inf")}}, ("spec", "extra", "deep", "x")),
        (("spec", "extra"), {"big": [10**400]}, ("spec", "extra", "big", 0)),
        (("spec", "futureField"), [float("nan")], ("spec", "futureField", 0)),
        (("spec", "items", 0, "later"), float("nan"), ("spec", "items", 0, "later")),
    ],
)
def test_nan_in_free_form_and_unknown_fields_is_refused_where_it_is(
    models: ModelRunner, where: tuple[str | int, ...], value: Any, loc: tuple[str | int, ...]
) -> None:
    invalid = models.errors(WIDGET, with_value(where, value))
    assert [(e_loc, kind) for e_loc, kind, _ in invalid.errors] == [(loc, "finite_number")]


@pytest.mark.parametrize(
    ("spec", "loc"),
    [
        pytest.param({"tags": ["a", "b", "a"]}, ("spec", "tags", 2), id="set"),
        pytest.param(
            {"ports": [{"name": "http", "number": 1}, {"name": "http", "number": 2}]},
            ("spec", "ports", 1, "name"),
            id="map",
        ),
        pytest.param(
            {
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "c",
                                "ports": [
                                    {"containerPort": 80},
                                    {"containerPort": 80, "protocol": "TCP"},
                                ],
                            }
                        ]
                    }
                }
            },
            ("spec", "template", "spec", "containers", 0, "ports", 1),
            id="map-with-defaulted-key",
        ),
    ],
)
def test_list_type_duplicates_are_refused_at_the_duplicate(
    models: ModelRunner, spec: JSON, loc: tuple[str | int, ...]
) -> None:
    invalid = models.errors(WIDGET, widget(**spec))
    assert [(e_loc, kind) for e_loc, kind, _ in invalid.errors] == [(loc, "list_duplicate")]


def test_duplicate_conditions_are_refused(models: ModelRunner) -> None:
    data = copy.deepcopy(FULL_WIDGET)
    data["status"]["conditions"].append(dict(data["status"]["conditions"][0]))
    invalid = models.errors(WIDGET, data)
    assert invalid.locs == {("status", "conditions", 1, "type")}


def test_distinct_keys_and_other_list_types_are_fine(models: ModelRunner) -> None:
    ports = [{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"}]
    data = widget(
        tags=["a", "b"],
        items=[{"name": "x"}, {"name": "x"}],  # not a list-type map: duplicates allowed
        template={"spec": {"containers": [{"name": "c", "ports": ports}]}},
    )
    assert models.load(WIDGET, data) == data


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("window", {}, "too_few_properties"),
        ("window", {"start": "a", "end": "b"}, "too_many_properties"),
        ("window", {"unknownOnly": 1}, "too_few_properties"),
    ],
)
def test_property_counts_are_checked_as_the_api_server_counts(
    models: ModelRunner, field: str, value: JSON, error: str
) -> None:
    invalid = models.errors(WIDGET, widget(**{field: value}))
    assert [(loc, kind) for loc, kind, _ in invalid.errors] == [(("spec", field), error)]


def test_defaults_count_towards_min_properties(models: ModelRunner) -> None:
    data = widget(tuning={}, window={"end": "b", "note": "pruned by the server"})
    assert models.load(WIDGET, data) == data


@pytest.mark.parametrize(
    "payload",
    [
        {"kind": "ConfigMap"},
        {"apiVersion": "v1"},
        {"apiVersion": "", "kind": "ConfigMap"},
        {"apiVersion": "a/b/c", "kind": "ConfigMap"},
        {"apiVersion": "v1", "kind": "Config_Map"},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": "x"},
    ],
)
def test_an_embedded_resource_needs_api_version_and_kind(
    models: ModelRunner, payload: JSON
) -> None:
    assert models.errors(WIDGET, widget(payload=payload)).locs == {("spec", "payload")}


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("2024-05-01T10:00:00Z", True),
        ("2024-02-29T23:59:59.5+05:30", True),
        ("2024-05-01t10:00:00z", True),
        ("2024-05-01T10:00:00ZTanything", True),  # kube-openapi reads up to the second T
        ("2024-05-01T10:00:00+99:99", True),  # nor does it check the zone's range
        ("2023-02-29T10:00:00Z", False),
        ("2024-04-31T10:00:00Z", False),
        ("2024-13-01T10:00:00Z", False),
        ("2024-05-01T24:00:00Z", False),
        ("2024-05-01T10:60:00Z", False),
        ("2024-05-01T10:00:00+0530", False),
        ("2024-05-01T10:00:00", False),
        ("2024-05-01T10:00:00Z\n", False),
        ("\u0662\u0660\u0662\u0664-05-01T10:00:00Z", False),
    ],
)
def test_date_times_as_kube_openapi_reads_them(
    models: ModelRunner, value: str, valid: bool
) -> None:
    if valid:
        assert models.load(WIDGET, widget(startAt=value))["spec"]["startAt"] == value
    else:
        assert models.errors(WIDGET, widget(startAt=value)).locs == {("spec", "startAt")}


def _nested(levels: int) -> Any:
    value: Any = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


@pytest.mark.parametrize("field", ["extra", "unknownField"])
def test_nesting_as_deep_as_the_api_server_takes_round_trips(
    models: ModelRunner, field: str
) -> None:
    # Widget (1) > spec (2) > field (3): the field's value may nest 9,998 more levels.
    code = (
        "import json\n"
        "from flarekit_models._json import dumps\n"
        "m = model(args['m'])\n"
        "d = args['d']\n"
        "v = {}\n"
        # Keys in the order a dump writes them: declared fields by name, then unknown ones.
        "d['spec'] = dict(sorted({**d['spec'], args['f']: v}.items(),"
        " key=lambda kv: (kv[0] == 'unknownField', kv[0])))\n"
        "for _ in range(args['n'] - 1):\n"
        "    v['a'] = {}\n"
        "    v = v['a']\n"
        "text = dumps(d)\n"
        "result = [dumps(m.model_validate(d).to_dict()) == text,"
        " m.model_validate_json(text).to_json() == text]"
    )
    assert models.run(code, m=WIDGET, d=widget(), f=field, n=9_998) == [True, True]
    with pytest.raises(Invalid) as too_deep:
        models.run(code, m=WIDGET, d=widget(), f=field, n=9_999)
    assert too_deep.value.types == {"json_depth"}
