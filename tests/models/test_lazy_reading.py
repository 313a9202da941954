"""Objects read lazily (``validate_json_lazily``) are the objects read eagerly.

Lists are read with ``validate_json_lazily``: checked in full at once by a validator derived
from the models' own, the models inside made when first read. On every sample and on
mutated samples (the fuzz suite's mutations), both readings accept and refuse the same text
with the same errors at the same places, and what they accept is equal and writes the same
JSON. The pending parts behave as models everywhere a model is looked at.
"""

from __future__ import annotations

import copy
import json
import pickle
import random
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from flarekit_models import UnknownResourceError, resource_model
from flarekit_models._base import KubeModel
from flarekit_models._json import deepest, dumps
from flarekit_models.ray.v1 import RayCluster

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from campaign import FAMILIES, _samples, schema_of
from mutate import mutate

#: Mutated cases per family (make fuzz's reference agrees with the models on these).
MUTATIONS = 60


def _verdict(kind: type[KubeModel], text: str, lazily: bool) -> tuple[str, Any]:
    read = kind.validate_json_lazily if lazily else kind.model_validate_json
    try:
        model = read(text)
    except ValidationError as exc:
        return "refused", [(e["type"], tuple(e["loc"])) for e in exc.errors()]
    return "accepted", model


def _agree(kind: type[KubeModel], text: str) -> None:
    eager, eager_result = _verdict(kind, text, lazily=False)
    lazy, lazy_result = _verdict(kind, text, lazily=True)
    assert lazy == eager, text[:300]
    if eager == "refused":
        assert lazy_result == eager_result
        return
    assert _same(lazy_result.to_dict(), eager_result.to_dict())
    assert lazy_result.model_fields_set == eager_result.model_fields_set
    if deepest(eager_result.to_dict())[0] < 200:  # == recurses, as dict equality does
        assert lazy_result == eager_result


def _same(a: Any, b: Any) -> bool:
    """JSON equality at any depth (without recursion; types compared too)."""
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if x.keys() != y.keys():
                return False
            todo.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            todo.extend(zip(x, y, strict=True))
        elif x != y and not (x != x and y != y):  # NaN only equals NaN here
            return False
    return True


def _objects() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for family, obj in _samples():
        try:
            resource_model(obj["apiVersion"], obj["kind"])
        except (UnknownResourceError, KeyError, TypeError):
            continue
        out.append((family, obj))
    return out


def test_every_sample_reads_the_same_lazily() -> None:
    objects = _objects()
    assert len(objects) > 100
    for _, obj in objects:
        _agree(resource_model(obj["apiVersion"], obj["kind"]), json.dumps(obj))


@pytest.mark.parametrize("family", FAMILIES)
def test_mutated_samples_read_the_same_lazily(family: str) -> None:
    seeds = [obj for owner, obj in _objects() if owner == family]
    assert seeds, family
    rng = random.Random(f"lazy-{family}")
    refused = 0
    for _ in range(MUTATIONS):
        obj = copy.deepcopy(rng.choice(seeds))
        for _ in range(rng.choice([1, 1, 2, 3])):
            mutate(obj, schema_of(obj["apiVersion"], obj["kind"]), rng)
        kind = resource_model(obj["apiVersion"], obj["kind"])
        try:
            text = json.dumps(obj)  # NaN written as NaN: read with it, then refused
        except RecursionError:  # deeper than the standard library's writer goes
            try:
                text = dumps(obj)
            except ValueError:  # deep and NaN: not JSON any writer here makes
                continue
        _agree(kind, text)
        refused += _verdict(kind, text, lazily=False)[0] == "refused"
    assert refused > 0


# --------------------------------------------------------------------------- pending parts
def _body() -> dict[str, Any]:
    pod = {"containers": [{"name": "ray", "image": "ray:2", "resources": {"limits": {"cpu": 2}}}]}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "labels": {"a": "b"}, "future": [1.0, None]},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": {"spec": pod}},
            "workerGroupSpecs": [
                {"groupName": "w", "replicas": 2, "rayStartParams": {}, "template": {"spec": pod}}
            ],
            "stop_policy": "kept as an unknown field",
        },
    }


def test_pending_parts_are_models_when_read() -> None:
    lazy = RayCluster.validate_json_lazily(json.dumps(_body()))
    eager = RayCluster.model_validate_json(json.dumps(_body()))
    assert type(lazy.__dict__["spec"]) is dict  # not made yet
    assert lazy.spec is not None and lazy.spec.worker_group_specs is not None
    assert lazy.spec.worker_group_specs[0].replicas == 2
    assert type(lazy.__dict__["spec"]).__name__ == "RayClusterSpec"
    assert lazy.spec == eager.spec
    assert lazy.metadata is not None and lazy.metadata.model_extra == {"future": [1.0, None]}
    assert lazy.spec.model_extra == {"stop_policy": "kept as an unknown field"}


@pytest.mark.parametrize(
    "look",
    [
        pytest.param(lambda m: m.to_dict(), id="to_dict"),
        pytest.param(lambda m: json.loads(m.to_json()), id="to_json"),
        pytest.param(lambda m: m.model_dump(), id="model_dump"),
        pytest.param(lambda m: m.model_dump(by_alias=False), id="by_name"),
        pytest.param(lambda m: m.model_dump(exclude_none=True), id="exclude_none"),
        pytest.param(lambda m: m.model_dump(exclude={"spec": {"head_group_spec"}}), id="exclude"),
        pytest.param(lambda m: repr(m), id="repr"),
        pytest.param(lambda m: dict(m), id="iter"),
        pytest.param(lambda m: copy.deepcopy(m).to_dict(), id="deepcopy"),
        pytest.param(lambda m: m.model_copy().to_dict(), id="copy"),
        pytest.param(lambda m: pickle.loads(pickle.dumps(m)).__dict__, id="pickle"),
    ],
)
def test_pending_parts_look_like_models_everywhere(look: Any) -> None:
    text = json.dumps(_body())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = look(RayCluster.validate_json_lazily(text))
    assert got == look(RayCluster.model_validate_json(text))


def test_a_lazily_read_part_inside_another_model_writes_its_json() -> None:
    from flarekit_models.ray.v1 import RayClusterSpec

    lazy = RayCluster.validate_json_lazily(json.dumps(_body()))
    spec = lazy.__dict__["spec"]
    assert type(spec) is dict  # still pending
    copy_of = RayCluster.model_validate({"metadata": {"name": "copy"}})
    copy_of.__dict__["spec"] = RayCluster.validate_json_lazily(json.dumps(_body())).spec
    copy_of.model_fields_set.add("spec")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        written = copy_of.to_dict()
    assert written["spec"] == _body()["spec"]
    assert isinstance(copy_of.spec, RayClusterSpec)
