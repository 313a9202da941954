"""Any depth the API server stores is written back by the client: request bodies (create,
apply, the fingerprinted create) of an object nested far deeper than pydantic's or the
standard library's JSON writers follow."""

from __future__ import annotations

import json
from typing import Any

from flarekit.client._codec import dump, dump_apply, load_json
from flarekit.client._fingerprint import fingerprinted
from flarekit_models import resource_model
from flarekit_models._json import MAX_DEPTH, deepest


def appwrapper(levels: int) -> Any:
    value: Any = {}
    for _ in range(levels):
        value = {"a": value}
    data = {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": "deep", "annotations": {"note": "é ☃ 𝄞"}},
        "spec": {
            "components": [{"template": {"apiVersion": "v1", "kind": "ConfigMap", "data": value}}]
        },
    }
    return resource_model(data["apiVersion"], data["kind"]).model_validate(data), data


def test_a_body_nested_deeper_than_the_standard_writers_is_written_back() -> None:
    model, data = appwrapper(MAX_DEPTH - 10)
    for body in (dump(model), dump_apply(model), fingerprinted(model)[0]):
        read = load_json(body)
        assert isinstance(read, dict)
        assert deepest(read)[0] == deepest(data)[0]


def test_apply_bodies_are_ascii_at_any_depth() -> None:
    shallow, _ = appwrapper(3)
    deep, _ = appwrapper(1000)
    for model in (shallow, deep):
        body = dump_apply(model)
        assert body.isascii()
        read = load_json(body)
        assert isinstance(read, dict)
        assert read["metadata"]["annotations"]["note"] == "é ☃ 𝄞"
    assert json.loads(dump_apply(shallow)) == load_json(dump_apply(shallow))


def test_a_deep_object_is_fingerprinted_in_its_body() -> None:
    model, _ = appwrapper(2000)
    body, fingerprint = fingerprinted(model)
    read = load_json(body)
    assert isinstance(read, dict)
    assert read["metadata"]["annotations"]["flarekit.dev/created-from"] == fingerprint
    assert fingerprinted(model)[1] == fingerprint
