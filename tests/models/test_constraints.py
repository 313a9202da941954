"""What the generated models refuse, as the API server would: the audit's cases.

Each case is an object the API server refuses (422 or 400) that the models used to accept:
constraints lost where CRDs share a Kubernetes type, duplicate keys of ``list-type`` lists,
NaN and Infinity, date-times the server does not parse, nesting too deep; and the data
loss of an unknown key equal to an attribute's Python name.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest
from pydantic import ValidationError

from flarekit_models import resource_model
from flarekit_models._json import MAX_DEPTH, dumps

JSON = dict[str, Any]


def raycluster(**head_container: Any) -> JSON:
    container = {"name": "ray-head", "image": "rayproject/ray:2.9.0", **head_container}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "demo"},
        "spec": {
            "headGroupSpec": {
                "rayStartParams": {},
                "template": {"spec": {"containers": [container]}},
            }
        },
    }


HEAD_SPEC = ("spec", "headGroupSpec", "template", "spec")


def errors(data: JSON) -> list[tuple[tuple[str | int, ...], str]]:
    model = resource_model(data["apiVersion"], data["kind"])
    with pytest.raises(ValidationError) as error:
        model.model_validate(data)
    return [(tuple(e["loc"]), e["type"]) for e in error.value.errors()]


def accepted(data: JSON) -> JSON:
    model = resource_model(data["apiVersion"], data["kind"])
    dumped: JSON = model.model_validate(data).to_dict()
    assert dumped == data
    return dumped


def with_path(data: JSON, path: tuple[str | int, ...], value: Any) -> JSON:
    out = copy.deepcopy(data)
    target: Any = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return out


# --------------------------------------------------------------------------- shared core types
def test_a_pod_template_needs_containers_where_its_crd_says_so() -> None:
    data = raycluster()
    data["spec"]["headGroupSpec"]["template"]["spec"] = {"restartPolicy": "Never"}
    assert errors(data) == [((*HEAD_SPEC, "containers"), "missing")]


def test_an_env_entry_needs_a_name() -> None:
    assert errors(raycluster(env=[{"value": "1"}])) == [
        ((*HEAD_SPEC, "containers", 0, "env", 0, "name"), "missing")
    ]


TRAINJOB: JSON = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {"name": "t"},
    "spec": {"runtimeRef": {"name": "torch-distributed"}},
}


@pytest.mark.parametrize("name", ["", "x" * 254])
def test_trainjob_runtime_ref_keeps_its_own_rules(name: str) -> None:
    bad = with_path(TRAINJOB, ("spec", "runtimeRef", "name"), name)
    assert [loc for loc, _ in errors(bad)] == [("spec", "runtimeRef", "name")]
    accepted(TRAINJOB)


def test_a_crd_that_checks_less_keeps_checking_less() -> None:
    # The JobSet CRD's PVC dataSource is a plain TypedLocalObjectReference: no name rules.
    volume = {
        "name": "scratch",
        "ephemeral": {
            "volumeClaimTemplate": {
                "spec": {"dataSource": {"kind": "VolumeSnapshot", "name": "Bad_Name!"}}
            }
        },
    }
    data = raycluster()
    data["spec"]["headGroupSpec"]["template"]["spec"]["volumes"] = [volume]
    accepted(data)


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_admission_check_parameters_keep_their_name_pattern(version: str) -> None:
    data: JSON = {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": "AdmissionCheck",
        "metadata": {"name": "ac"},
        "spec": {
            "controllerName": "kueue.x-k8s.io/provisioning-request",
            "parameters": {
                "apiGroup": "kueue.x-k8s.io",
                "kind": "ProvisioningRequestConfig",
                "name": "prov-config",
            },
        },
    }
    accepted(data)
    bad = with_path(data, ("spec", "parameters", "name"), "Bad_Name!")
    assert [loc for loc, _ in errors(bad)] == [("spec", "parameters", "name")]


def test_a_condition_status_is_true_false_or_unknown() -> None:
    condition = {
        "type": "Active",
        "status": "True",
        "reason": "Ready",
        "message": "ok",
        "lastTransitionTime": "2024-05-01T10:00:00Z",
    }
    data: JSON = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "q"},
        "spec": {"clusterQueue": "cq"},
        "status": {"conditions": [condition]},
    }
    accepted(data)
    bad = with_path(data, ("status", "conditions", 0, "status"), "Maybe")
    assert errors(bad) == [(("status", "conditions", 0, "status"), "literal_error")]


def test_a_runtime_template_may_not_be_empty() -> None:
    data: JSON = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "r"},
        "spec": {"template": {}},
    }
    assert errors(data) == [(("spec", "template"), "too_few_properties")]
    accepted(with_path(data, ("spec", "template"), {"spec": {}}))


# --------------------------------------------------------------------------- list types
def test_two_containers_of_the_same_name_are_refused_at_the_second_name() -> None:
    data = raycluster()
    containers = data["spec"]["headGroupSpec"]["template"]["spec"]["containers"]
    containers.append({"name": "ray-head", "image": "busybox"})
    assert errors(data) == [((*HEAD_SPEC, "containers", 1, "name"), "list_duplicate")]


def test_list_map_keys_count_with_their_defaults() -> None:
    # protocol defaults to TCP before the API server checks (containerPort, protocol).
    ports = [{"containerPort": 6379}, {"containerPort": 6379, "protocol": "TCP"}]
    assert errors(raycluster(ports=ports)) == [
        ((*HEAD_SPEC, "containers", 0, "ports", 1), "list_duplicate")
    ]
    accepted(
        raycluster(ports=[{"containerPort": 6379}, {"containerPort": 6379, "protocol": "UDP"}])
    )


def test_the_duplicate_message_names_both_places() -> None:
    data = raycluster()
    data["spec"]["headGroupSpec"]["template"]["spec"]["containers"].append({"name": "ray-head"})
    model = resource_model("ray.io/v1", "RayCluster")
    with pytest.raises(ValidationError) as error:
        model.model_validate(data)
    message = error.value.errors()[0]["msg"]
    assert "name='ray-head'" in message and "[1]" in message and "[0]" in message


# --------------------------------------------------------------------------- numbers and times
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_are_refused_everywhere(value: float) -> None:
    appwrapper: JSON = {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": "aw"},
        "spec": {"components": [{"template": {"apiVersion": "v1", "kind": "Pod", "x": value}}]},
    }
    assert [loc for loc, _ in errors(appwrapper)] == [("spec", "components", 0, "template", "x")]
    unknown = raycluster()
    unknown["spec"]["futureField"] = {"ratio": [value]}
    assert [loc for loc, _ in errors(unknown)] == [("spec", "futureField", "ratio", 0)]


DATE_TIMES = [
    "2024-13-45T25:61:00Z",
    "2024-02-30T10:00:00Z",
    "2023-02-29T10:00:00Z",
    "\u0662\u0660\u0662\u0664-05-01T10:00:00Z",  # Arabic-Indic digits
    "2024-05-01T10:00Z",
    "2024-05-01 10:00:00Z",
    "2024-05-01T10:00:00",
]


@pytest.mark.parametrize("value", DATE_TIMES)
def test_date_times_are_checked_as_the_api_server_checks_them(value: str) -> None:
    data: JSON = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "q"},
        "spec": {"clusterQueue": "cq"},
        "status": {
            "conditions": [
                {
                    "type": "Active",
                    "status": "True",
                    "reason": "Ready",
                    "message": "",
                    "lastTransitionTime": value,
                }
            ]
        },
    }
    assert errors(data) == [(("status", "conditions", 0, "lastTransitionTime"), "date_time")]


# --------------------------------------------------------------------------- depth
def _nested(levels: int) -> Any:
    value: Any = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def _appwrapper_of_depth(total: int) -> JSON:
    # metadata-less AppWrapper; the template is at depth 5 (object, spec, components, [0], template)
    template = {"apiVersion": "v1", "kind": "ConfigMap", "data": _nested(total - 5)}
    return {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "spec": {"components": [{"template": template}]},
    }


def test_the_deepest_object_the_api_server_accepts_round_trips() -> None:
    data = _appwrapper_of_depth(MAX_DEPTH)
    model = resource_model("workload.codeflare.dev/v1beta2", "AppWrapper")
    text = dumps(data)
    assert dumps(model.model_validate(data).to_dict()) == text
    assert model.model_validate_json(text).to_json() == text


def test_one_level_deeper_is_refused_when_read() -> None:
    data = _appwrapper_of_depth(MAX_DEPTH + 1)
    model = resource_model("workload.codeflare.dev/v1beta2", "AppWrapper")
    for parse in (
        lambda: model.model_validate(data),
        lambda: model.model_validate_json(dumps(data)),
    ):
        with pytest.raises(ValidationError) as error:
            parse()
        (only,) = error.value.errors()
        assert only["type"] == "json_depth" and "10000 levels" in only["msg"]


# --------------------------------------------------------------------------- unknown keys
def test_a_python_name_as_a_json_key_stays_an_unknown_key() -> None:
    data: JSON = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "q"},
        "spec": {"clusterQueue": "cq", "stop_policy": "Hold"},
    }
    model = resource_model("kueue.x-k8s.io/v1beta2", "LocalQueue")
    assert model.model_validate(data).to_dict() == data
    assert json.loads(model.model_validate_json(json.dumps(data)).to_json()) == data


# --------------------------------------------------------------------------- scale subresource
def _jaxjob(**worker: Any) -> JSON:
    spec = {"template": {"spec": {"containers": [{"name": "jax", "image": "jax:1"}]}}, **worker}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "JAXJob",
        "metadata": {"name": "j"},
        "spec": {"jaxReplicaSpecs": {"Worker": spec}},
    }


@pytest.mark.parametrize("replicas", [-1, -(2**31)])
def test_the_replicas_a_scale_subresource_reads_are_counts(replicas: int) -> None:
    # JAXJob's scale subresource reads spec.jaxReplicaSpecs.Worker.replicas: the API server
    # refuses a negative count there, although the schema alone allows any int32.
    path = ("spec", "jaxReplicaSpecs", "Worker", "replicas")
    assert errors(_jaxjob(replicas=replicas)) == [(path, "scale_subresource")]
    accepted(_jaxjob(replicas=0))
    master = _jaxjob(replicas=2)
    master["spec"]["jaxReplicaSpecs"]["Master"] = _jaxjob(replicas=-1)["spec"]["jaxReplicaSpecs"][
        "Worker"
    ]
    accepted(master)


def test_list_map_keys_of_plain_objects_are_compared_as_json() -> None:
    from pydantic_core import PydanticCustomError

    from flarekit_models._types import list_map

    check = list_map("name").func
    with pytest.raises(PydanticCustomError) as error:
        check([{"name": "a"}, {"name": "a"}])
    assert "name='a'" in error.value.message()
    assert check([{"name": 1}, {"name": "1"}, {"name": True}])  # JSON types differ


# --------------------------------------------------------------------------- JSON text
#: Numbers the API server refuses, written as pydantic's parser reads them.
REFUSED_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e400", "-2E+309", "1" + "0" * 400]


@pytest.mark.parametrize("number", REFUSED_NUMBERS)
def test_json_text_with_a_number_the_server_refuses_is_refused_where_it_is(number: str) -> None:
    # Free-form values read from text are walked only when the text may hold such a number.
    fields_v1 = '{"managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {"x": %s}}}]}'
    text = json.dumps(raycluster()).replace('{"name": "demo"}', fields_v1 % number)
    model = resource_model("ray.io/v1", "RayCluster")
    with pytest.raises(ValidationError) as error:
        model.model_validate_json(text)
    (only,) = error.value.errors()
    assert only["loc"] == ("metadata", "managedFields", 0, "fieldsV1", "f:spec", "x")
    assert only["type"] == "finite_number"


@pytest.mark.parametrize(
    "text",
    [
        '{"a": NaN}',
        '{"a": [1, -Infinity]}',
        '{"a": 1e400}',
        '{"a": 1.5E-308}',
        '{"a": 12345678901234567890}',
        '{"a": -1234567890123456789}',
        "[-Infinity]",
        "1E+400",
        '{"a": [0, 1e-400 ]}',
        '{"a": "looks like a list: 1e400, 2"}',
    ],
)
def test_text_that_may_hold_a_refused_number_is_walked(text: str) -> None:
    from flarekit_models._json import numbers_in_range

    assert not numbers_in_range(text)
    assert not numbers_in_range(text.encode())


@pytest.mark.parametrize(
    "text",
    [
        '{"uid": "95c2edfb-952d-4df6-ab15e952", "v": "5e952"}',
        '{"a": "NaN", "b": "-Infinity", "c": "12345678901234567890"}',
        '{"note": "1e400 is too big", "token": "x1e400"}',
    ],
)
def test_refused_shapes_inside_strings_need_no_walk(text: str) -> None:
    from flarekit_models._json import numbers_in_range

    assert numbers_in_range(text) and numbers_in_range(text.encode())


@pytest.mark.parametrize(
    "value", [0, -1, 123456789012345678, -(10**17), 1.5, -2.5e-30, 1e99, 6.02e23, "10:00:00Z"]
)
def test_text_whose_numbers_the_server_takes_needs_no_walk(value: object) -> None:
    from flarekit_models._json import check_json, numbers_in_range

    data = {"metadata": {"name": "rc", "generation": 3}, "x": [value, {"y": value}]}
    text = json.dumps(data)
    assert numbers_in_range(text) and numbers_in_range(text.encode())
    assert check_json(json.loads(text)) == 3  # the walk finds nothing to refuse


def test_pydantic_parses_no_deeper_than_free_form_values_are_walked_for() -> None:
    # Skipping the walk for text relies on this: a free-form value parsed by pydantic is at
    # most SHALLOW levels deep, so the walk could not have found it deep.
    from pydantic_core import from_json

    from flarekit_models._json import SHALLOW

    from_json("[" * (SHALLOW + 1) + "]" * (SHALLOW + 1))
    with pytest.raises(ValueError, match="recursion limit"):
        from_json("[" * (SHALLOW + 2) + "]" * (SHALLOW + 2))


# --------------------------------------------------------------------------- assignment
@pytest.mark.parametrize("value", [math.nan, math.inf, "two"])
def test_an_assigned_value_is_validated_as_the_field_is_on_input(value: Any) -> None:
    # A NaN assigned without validation was written as null: a patch then deleted the field.
    model = resource_model("ray.io/v1", "RayJob")
    job = model.model_validate(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": {"name": "j"},
            "spec": {"entrypoint": "python run.py", "entrypointNumCpus": 1.5},
        }
    )
    with pytest.raises(ValidationError) as error:
        job.spec.entrypoint_num_cpus = value
    assert error.value.errors()[0]["loc"] == ("entrypoint_num_cpus",)
    assert job.to_dict()["spec"]["entrypointNumCpus"] == 1.5


def test_assignment_keeps_unknown_fields_as_they_were() -> None:
    model = resource_model("ray.io/v1", "RayJob")
    job = model.model_validate(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": {"name": "j", "futureMeta": [1]},
            "spec": {"entrypoint": "python run.py", "futureField": {"a": 1}},
        }
    )
    job.spec.entrypoint_num_cpus = 2
    job.spec.entrypoint = "python other.py"
    job.metadata.labels = {"team": "a"}
    assert job.to_dict() == {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "j", "futureMeta": [1], "labels": {"team": "a"}},
        "spec": {"entrypoint": "python other.py", "futureField": {"a": 1}, "entrypointNumCpus": 2},
    }


@pytest.mark.parametrize(
    "metadata", [{"labels": {"team": 1}}, {"annotations": {"a": True}}, {"labels": ["a"]}]
)
def test_an_embedded_objects_labels_and_annotations_map_strings(metadata: JSON) -> None:
    template = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata}
    appwrapper: JSON = {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": "aw"},
        "spec": {"components": [{"template": template}]},
    }
    assert errors(appwrapper) == [(("spec", "components", 0, "template"), "embedded_resource")]
    template["metadata"] = {"labels": {"team": "a"}, "annotations": {"note": "x"}}
    accepted(appwrapper)
