"""`flarekit.client._pruning`: which fields of a request body the stored object lacks, and which
differences are not losses (defaults, server-managed metadata, status, nulls, list order)."""

from __future__ import annotations

from typing import Any

import pytest

from flarekit.client._pruning import (
    Scope,
    apiserver_path,
    built_in_group,
    pruned_by_json_patch,
    pruned_fields,
    render_path,
)

PLAIN = Scope()


def paths(sent: Any, returned: Any, scope: Scope = PLAIN) -> list[str]:
    return [render_path(p) for p in pruned_fields(sent, returned, scope)]


def test_identical_objects_lose_nothing() -> None:
    body = {"apiVersion": "v1", "kind": "X", "spec": {"a": 1, "b": [{"c": "d"}]}}
    assert paths(body, body) == []


def test_a_dropped_field_is_listed_by_its_path() -> None:
    sent = {"spec": {"keep": 1, "gone": {"deep": 2}, "nested": {"x": 1, "y": 2}}}
    stored = {"spec": {"keep": 1, "nested": {"x": 1}}}
    assert paths(sent, stored) == ["spec.gone", "spec.nested.y"]


def test_only_the_outermost_missing_field_is_listed() -> None:
    assert paths({"spec": {"a": {"b": {"c": 1}}}}, {"spec": {}}) == ["spec.a"]
    assert paths({"spec": {"a": 1}}, {}) == ["spec"]


def test_server_defaults_and_normalised_values_are_not_losses() -> None:
    sent = {"spec": {"cpu": "1000m", "port": "8080", "list": [1]}}
    stored = {"spec": {"cpu": "1", "port": 8080, "list": [1, 2], "defaulted": True}}
    assert paths(sent, stored) == []


def test_a_value_of_another_type_is_a_rewrite_not_a_loss() -> None:
    assert paths({"spec": {"a": {"b": 1}}}, {"spec": {"a": "b=1"}}) == []


def test_null_values_are_not_losses() -> None:
    assert paths({"spec": {"a": None, "b": {"c": None}}}, {"spec": {"b": {}}}) == []


def test_server_managed_metadata_is_ignored_but_labels_are_not() -> None:
    sent = {
        "metadata": {
            "name": "x",
            "resourceVersion": "5",
            "managedFields": [{"manager": "me"}],
            "uid": "u",
            "labels": {"app.kubernetes.io/name": "x", "team": "a"},
        }
    }
    stored = {"metadata": {"name": "x", "resourceVersion": "6", "labels": {"team": "a"}}}
    assert paths(sent, stored) == ["metadata.labels[app.kubernetes.io/name]"]


def test_a_generated_name_replaces_the_sent_one() -> None:
    sent = {"metadata": {"generateName": "job-", "name": ""}}
    assert paths(sent, {"metadata": {"generateName": "job-", "name": "job-abcde"}}) == []


def test_status_is_ignored_on_the_main_endpoint_of_a_kind_with_a_status_subresource() -> None:
    sent = {"spec": {"a": 1}, "status": {"phase": "Done"}}
    stored = {"spec": {"a": 1}}
    assert paths(sent, stored, Scope(status_subresource=True)) == []
    assert paths(sent, stored, Scope(status_subresource=False)) == ["status"]


def test_only_status_counts_on_the_status_subresource() -> None:
    sent = {"spec": {"a": 2}, "status": {"phase": "Done", "extra": 1}}
    stored = {"spec": {"a": 1}, "status": {"phase": "Done"}}
    scope = Scope(subresource="status", status_subresource=True)
    assert paths(sent, stored, scope) == ["status.extra"]


def test_list_items_are_matched_by_position() -> None:
    sent = {"spec": {"items": [{"a": 1, "b": 2}, {"a": 3}, {"a": 4}]}}
    stored = {"spec": {"items": [{"a": 1}, {"a": 3}]}}
    assert paths(sent, stored) == ["spec.items[0].b", "spec.items[2]"]


def test_list_map_items_are_matched_by_key_whatever_their_order() -> None:
    sent = {"spec": {"containers": [{"name": "a", "x": 1}, {"name": "b", "y": 2}]}}
    stored = {"spec": {"containers": [{"name": "b", "y": 2}, {"name": "a"}]}}
    assert paths(sent, stored) == ["spec.containers[0].x"]
    sent = {"status": {"conditions": [{"type": "Ready", "reason": "R"}]}}
    stored = {"status": {"conditions": [{"type": "Other"}, {"type": "Ready"}]}}
    assert paths(sent, stored) == ["status.conditions[0].reason"]


def test_keyed_lists_fall_back_to_positions_when_keys_are_missing_or_repeated() -> None:
    sent = {"spec": {"containers": [{"image": "a", "x": 1}]}}
    assert paths(sent, {"spec": {"containers": [{"image": "a"}]}}) == ["spec.containers[0].x"]
    sent = {"spec": {"env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]}}
    stored = {"spec": {"env": [{"name": "A", "value": "1"}, {"name": "A"}]}}
    assert paths(sent, stored) == ["spec.env[1].value"]


def test_a_removed_keyed_item_is_listed() -> None:
    sent = {"spec": {"volumes": [{"name": "a"}, {"name": "b"}]}}
    assert paths(sent, {"spec": {"volumes": [{"name": "a"}]}}) == ["spec.volumes[1]"]


def test_custom_list_keys() -> None:
    scope = Scope(list_keys={"ports": ("port",)})
    sent = {"spec": {"ports": [{"port": 1, "name": "a"}, {"port": 2}]}}
    stored = {"spec": {"ports": [{"port": 2}, {"port": 1}]}}
    assert paths(sent, stored, scope) == ["spec.ports[0].name"]


def test_built_in_kinds_leave_out_empty_values() -> None:
    sent = {"spec": {"a": "", "b": 0, "c": False, "d": {}, "e": [], "f": "x"}}
    assert paths(sent, {"spec": {}}, Scope(omit_empty=True)) == ["spec.f"]
    assert paths(sent, {"spec": {}}) == [f"spec.{k}" for k in "abcdef"]


def test_apiversion_and_kind_are_not_compared() -> None:
    assert paths({"apiVersion": "a/v1", "kind": "K"}, {}) == []


def test_inputs_are_not_modified() -> None:
    sent = {"spec": {"a": [{"b": 1}]}}
    stored: dict[str, Any] = {"spec": {"a": []}}
    paths(sent, stored)
    assert sent == {"spec": {"a": [{"b": 1}]}} and stored == {"spec": {"a": []}}


def test_non_objects_lose_nothing() -> None:
    assert paths([1], {}) == [] and paths({}, None) == []


def test_json_patch_added_and_replaced_values_are_checked() -> None:
    stored = {"spec": {"a": {"b": 1}, "list": [{"x": 1}]}, "status": {}}
    ops: list[dict[str, Any]] = [
        {"op": "add", "path": "/spec/a", "value": {"b": 1, "c": 2}},
        {"op": "replace", "path": "/spec/gone", "value": 3},
        {"op": "add", "path": "/spec/list/0", "value": {"x": 1, "y": 2}},
        {"op": "add", "path": "/spec/list/-", "value": {"z": 1}},
        {"op": "remove", "path": "/spec/other"},
        {"op": "test", "path": "/spec/nothing", "value": 1},
        {"op": "add", "path": "/metadata/resourceVersion", "value": "1"},
        {"op": "add", "path": "/status/phase", "value": "x"},
        {"op": "add", "path": "/spec/nulled", "value": None},
    ]
    found = pruned_by_json_patch(ops, stored, Scope(status_subresource=True))
    assert [render_path(p) for p in found] == ["spec.a.c", "spec.gone", "spec.list[0].y"]


def test_json_patch_pointer_escapes() -> None:
    ops = [{"op": "add", "path": "/metadata/labels/a~1b~0c", "value": "v"}]
    found = pruned_by_json_patch(ops, {"metadata": {"labels": {}}})
    assert [render_path(p) for p in found] == ["metadata.labels[a/b~c]"]


@pytest.mark.parametrize(
    ("path", "human", "server"),
    [
        (("spec", "a", 0, "b"), "spec.a[0].b", "spec.a[0].b"),
        (("metadata", "labels", "x.io/y"), "metadata.labels[x.io/y]", "metadata.labels.x.io/y"),
        (("spec", "nodeSelector", "a b"), "spec.nodeSelector[a b]", "spec.nodeSelector.a b"),
    ],
)
def test_path_spellings(path: tuple[str | int, ...], human: str, server: str) -> None:
    assert render_path(path) == human
    assert apiserver_path(path) == server


@pytest.mark.parametrize(
    ("group", "built_in"),
    [("", True), ("apps", True), ("networking.k8s.io", True), ("kueue.x-k8s.io", False),
     ("ray.io", False)],
)  # fmt: skip
def test_built_in_groups(group: str, built_in: bool) -> None:
    assert built_in_group(group) is built_in
