"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902) with the API server's errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from flarekit_testing.apiserver._patch import PatchError, apply_json_patch, apply_merge_patch

# --- merge patch ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "patch", "result"),
    [  # the examples of RFC 7386 appendix A
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
        ({"a": "foo"}, ["c"], ["c"]),
    ],
)
def test_merge_patch_rfc_examples(doc: Any, patch: Any, result: Any) -> None:
    before = copy.deepcopy(doc)
    assert apply_merge_patch(doc, patch) == result
    assert doc == before


def test_merge_patch_result_shares_nothing_with_the_patch() -> None:
    patch = {"spec": {"tags": ["a"]}}
    out = apply_merge_patch({}, patch)
    out["spec"]["tags"].append("b")
    assert patch == {"spec": {"tags": ["a"]}}


@pytest.mark.parametrize("patch", [None, 5, "x", True])
def test_merge_patch_rejects_null_and_scalars(patch: Any) -> None:
    with pytest.raises(PatchError) as err:
        apply_merge_patch({"a": 1}, patch)
    assert (err.value.message, err.value.status_code) == ("Invalid JSON Patch", 400)


# --- JSON patch ----------------------------------------------------------------------------

DOC: dict[str, Any] = {
    "spec": {"replicas": 1, "tags": ["a", "b"], "a/b": {"m~n": 1}},
    "metadata": {"name": "x"},
}


def test_add_replace_remove() -> None:
    out = apply_json_patch(
        DOC,
        [
            {"op": "add", "path": "/spec/new", "value": {"k": [1]}},
            {"op": "replace", "path": "/spec/replicas", "value": 3},
            {"op": "remove", "path": "/metadata/name"},
            {"op": "add", "path": "/spec/tags/1", "value": "x"},
            {"op": "add", "path": "/spec/tags/-", "value": "z"},
            {"op": "remove", "path": "/spec/tags/0"},
            {"op": "replace", "path": "/spec/tags/0", "value": "y"},
        ],
    )
    assert out == {
        "spec": {"replicas": 3, "tags": ["y", "b", "z"], "a/b": {"m~n": 1}, "new": {"k": [1]}},
        "metadata": {},
    }
    assert DOC["spec"]["replicas"] == 1  # input untouched


def test_pointer_escaping() -> None:
    out = apply_json_patch(DOC, [{"op": "replace", "path": "/spec/a~1b/m~0n", "value": 2}])
    assert out["spec"]["a/b"] == {"m~n": 2}


def test_move_copy_test() -> None:
    out = apply_json_patch(
        DOC,
        [
            {"op": "test", "path": "/spec/replicas", "value": 1},
            {"op": "test", "path": "/spec/tags", "value": ["a", "b"]},
            {"op": "copy", "from": "/spec/tags", "path": "/spec/copied"},
            {"op": "move", "from": "/metadata/name", "path": "/spec/name"},
            {"op": "add", "path": "/spec/copied/-", "value": "c"},
        ],
    )
    assert out["spec"]["copied"] == ["a", "b", "c"]
    assert out["spec"]["tags"] == ["a", "b"]
    assert out["spec"]["name"] == "x"
    assert "name" not in out["metadata"]


def test_test_compares_json_values() -> None:
    assert apply_json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 1.0}]) == {"a": 1}
    with pytest.raises(PatchError):
        apply_json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": True}])


@pytest.mark.parametrize(
    ("patch", "message", "status"),
    [
        (
            [{"op": "test", "path": "/spec/replicas", "value": 2}],
            "testing value /spec/replicas failed: test failed",
            422,
        ),
        (
            [{"op": "add", "path": "/spec/nope/x", "value": 1}],
            'add operation does not apply: doc is missing path: "/spec/nope/x": missing value',
            422,
        ),
        (
            [{"op": "remove", "path": "/spec/nope"}],
            "error in remove for path: '/spec/nope': Unable to remove nonexistent key: nope: "
            "missing value",
            422,
        ),
        (
            [{"op": "replace", "path": "/spec/nope", "value": 1}],
            "replace operation does not apply: doc is missing key: /spec/nope: missing value",
            422,
        ),
        (
            [{"op": "add", "path": "/spec/tags/5", "value": "x"}],
            "error in add for path: '/spec/tags/5': Unable to access invalid index: 5: "
            "invalid index referenced",
            422,
        ),
        (
            [{"op": "remove", "path": "/spec/tags/x"}],
            "error in remove for path: '/spec/tags/x': value was not a proper array index: "
            "'x': invalid index referenced",
            422,
        ),
        (
            [{"op": "move", "from": "/nope", "path": "/x"}],
            "error in move for path: 'nope': Unable to remove nonexistent key: nope: missing value",
            422,
        ),
        (
            [{"op": "copy", "from": "/a/b", "path": "/x"}],
            "copy operation does not apply: doc is missing from path: /a/b: missing value",
            422,
        ),
        ([{"op": "frobnicate", "path": "/x"}], "Unexpected kind: frobnicate", 422),
        ([{"op": "add", "value": 1}], "add operation failed to decode path: missing value", 422),
        (
            [{"op": "add", "path": "spec", "value": 1}],
            'add operation does not apply: doc is missing path: "spec": missing value',
            422,
        ),
        (
            {"op": "add"},
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
            400,
        ),
        (
            ["add"],
            "json: cannot unmarshal string into Go value of type jsonpatch.Operation",
            400,
        ),
    ],
)
def test_json_patch_errors(patch: Any, message: str, status: int) -> None:
    with pytest.raises(PatchError) as err:
        apply_json_patch(DOC, patch)
    assert (str(err.value), err.value.status_code) == (message, status)


def test_failed_patch_changes_nothing() -> None:
    doc = copy.deepcopy(DOC)
    with pytest.raises(PatchError):
        apply_json_patch(
            doc,
            [
                {"op": "replace", "path": "/spec/replicas", "value": 9},
                {"op": "test", "path": "/spec/replicas", "value": 1},
            ],
        )
    assert doc == DOC
