"""Python names for JSON names, and class names for schema roles.

Attribute names must be valid, unshadowing and stable; class names must say what
a thing is (qualified by its parent on a clash, never numbered), and one class
serves several roles only when the roles share a meaningful name.
"""

from __future__ import annotations

import importlib
import importlib.util
import keyword
import sys
from typing import Any

import pytest

from flarekit_generator import paths
from flarekit_generator.ir import Node
from flarekit_generator.naming import (
    common_suffix,
    no_trailing_digit,
    pascal_case,
    singular,
    snake_case,
    words,
)
from flarekit_generator.parse import parse_schema
from flarekit_generator.plan import HELPER_NAMES, FamilyPlanner, ModulePlan

STATIC = paths.runtime_dir()


@pytest.mark.parametrize(
    ("json_name", "expected"),
    [
        ("podIPs", ["pod", "IPs"]),
        ("hostIPC", ["host", "IPC"]),
        ("HTTPGet", ["HTTP", "Get"]),
        ("tlsCACert", ["tls", "CA", "Cert"]),
        ("containerID", ["container", "ID"]),
        ("podCIDRs", ["pod", "CIDRs"]),
        ("x509Cert", ["x509", "Cert"]),
        ("IPv6", ["IPv6"]),
        ("gRPC", ["gRPC"]),
        ("x-kubernetes-thing", ["x", "kubernetes", "thing"]),
        ("", []),
    ],
)
def test_words(json_name: str, expected: list[str]) -> None:
    assert words(json_name) == expected


@pytest.mark.parametrize(
    ("json_name", "attr"),
    [
        ("replicas", "replicas"),
        ("minReplicas", "min_replicas"),
        ("podIPs", "pod_ips"),
        ("hostIPC", "host_ipc"),
        ("HTTPGet", "http_get"),
        ("apiVersion", "api_version"),
        # Python keywords
        ("from", "from_"),
        ("continue", "continue_"),
        ("class", "class_"),
        ("None", "none_"),
        # BaseModel and KubeModel attributes
        ("json", "json_"),
        ("schema", "schema_"),
        ("copy", "copy_"),
        ("validate", "validate_"),
        ("toDict", "to_dict_"),
        ("modelConfig", "model_config_"),
        ("model_dump", "model_dump_"),
        # names the generated annotations use
        ("str", "str_"),
        ("dict", "dict_"),
        ("any", "any_"),
        # not identifiers at all
        ("3dModel", "n_3d_model"),
        ("", "field"),
        ("$ref", "ref"),
    ],
)
def test_snake_case(json_name: str, attr: str) -> None:
    assert snake_case(json_name) == attr
    assert attr.isidentifier() and not keyword.iskeyword(attr)


def _load_static_base() -> Any:
    """The runtime's ``_base`` module, imported as part of a package of the runtime modules
    alone (its imports of the other runtime modules are relative)."""
    package = "flarekit_test_runtime"
    if package not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            package, STATIC / "__init__.py", submodule_search_locations=[str(STATIC)]
        )
        assert spec is not None
        sys.modules[package] = importlib.util.module_from_spec(spec)
    return importlib.import_module(f"{package}._base")


def test_no_json_name_shadows_a_model_attribute() -> None:
    base = _load_static_base()
    public = {n for n in dir(base.KubeResource) if not n.startswith("_")}
    # Every public attribute, written as a JSON name would be, must be escaped.
    shadowing = {n for n in public if snake_case(n) in public}
    camel = {"".join(w.title() if i else w for i, w in enumerate(n.split("_"))) for n in public}
    shadowing |= {n for n in camel if snake_case(n) in public}
    assert shadowing == set()


def test_snake_case_does_not_depend_on_the_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    names = ["type", "match", "case", "kind"]
    here = [snake_case(n) for n in names]
    newer = frozenset({"_", "case", "match", "type"})  # Python 3.12's soft keywords
    monkeypatch.setattr(keyword, "issoftkeyword", lambda s: s in newer)
    assert [snake_case(n) for n in names] == here
    assert here == names  # soft keywords are ordinary identifiers


@pytest.mark.parametrize(
    ("json_name", "fragment"),
    [
        ("headGroupSpec", "HeadGroupSpec"),
        ("podIPs", "PodIPs"),
        ("hostIPC", "HostIPC"),
        ("3dModel", "N3dModel"),
        ("", "Value"),
    ],
)
def test_pascal_case(json_name: str, fragment: str) -> None:
    assert pascal_case(json_name) == fragment


@pytest.mark.parametrize(
    ("plural", "single"),
    [
        ("podSets", "podSet"),
        ("policies", "policy"),
        ("addresses", "address"),
        ("boxes", "box"),
        ("matches", "match"),
        ("statuses", "status"),
        ("status", "status"),
        ("analysis", "analysis"),
        ("podIPs", "podIP"),
        ("data", "data"),
        ("aliases", "alias"),
        ("hostAliases", "hostAlias"),
        ("series", "series"),
        ("gpus", "gpu"),
        ("GPUs", "GPU"),
    ],
)
def test_singular(plural: str, single: str) -> None:
    assert singular(plural) == single


def test_class_names_never_end_in_a_digit() -> None:
    assert no_trailing_digit("V2") == "V2Spec"
    assert no_trailing_digit("Ipv6Config") == "Ipv6Config"


@pytest.mark.parametrize(
    ("names", "suffix"),
    [
        (["LivenessCheck", "ReadinessCheck"], "Check"),
        (["HeadGroupSpec", "WorkerGroupSpec"], "GroupSpec"),
        (["FooRef", "BarSettings"], ""),
        (["Probe"], "Probe"),
    ],
)
def test_common_suffix(names: list[str], suffix: str) -> None:
    assert common_suffix(names) == suffix


# --------------------------------------------------------------------------- class names
def _obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


STRING = {"type": "string"}
INT = {"type": "integer"}


def plan(spec: dict[str, Any], reserved: frozenset[str] = frozenset()) -> ModulePlan:
    """Plan one kind ``Thing`` whose spec is ``spec``."""
    root = parse_schema(
        _obj(apiVersion=STRING, kind=STRING, metadata={"type": "object"}, spec=spec)
    )

    def no_core(node: Node) -> tuple[str, str]:
        raise AssertionError(f"unexpected core type {node.core_type}")

    planner = FamilyPlanner("example.v1", "example.flarekit.dev", "v1", set(reserved))
    return planner.plan([("Thing", root)], no_core, [])


def field_types(module: ModulePlan, cls: str) -> dict[str, str]:
    return {f.json_name: f.annotation for f in module.classes[cls].fields}


def test_same_shape_with_a_shared_role_name_is_one_class() -> None:
    check = _obj(path=STRING, periodSeconds=INT)
    module = plan(_obj(livenessCheck=check, readinessCheck=check))
    assert sorted(module.classes) == ["Check", "Thing", "ThingSpec"]
    assert field_types(module, "ThingSpec") == {
        "livenessCheck": "Check | None",
        "readinessCheck": "Check | None",
    }


@pytest.mark.parametrize(
    ("first", "second"), [("fooRef", "barSettings"), ("fooRef", "barRef"), ("mainSpec", "sideSpec")]
)
def test_same_shape_under_unrelated_or_generic_roles_stays_apart(first: str, second: str) -> None:
    ref = _obj(name=STRING, namespace=STRING)
    module = plan(_obj(**{first: ref, second: ref}))
    types = field_types(module, "ThingSpec")
    assert types[first] != types[second]
    assert types[first] == f"{pascal_case(first)} | None"
    assert types[second] == f"{pascal_case(second)} | None"


def test_clashing_roles_are_qualified_by_their_parents() -> None:
    module = plan(_obj(leader=_obj(spec=_obj(size=INT)), follower=_obj(spec=_obj(count=INT))))
    assert field_types(module, "Leader") == {"spec": "LeaderSpec | None"}
    assert field_types(module, "Follower") == {"spec": "FollowerSpec | None"}


def test_deep_clashes_are_qualified_by_more_ancestors_never_numbered() -> None:
    inner_a, inner_b, inner_c = _obj(a=INT), _obj(b=INT), _obj(c=INT)
    module = plan(
        _obj(
            east=_obj(rack=_obj(slot=inner_a)),
            west=_obj(rack=_obj(slot=inner_b)),
            north=_obj(slot=inner_c),
        )
    )
    names = sorted(module.classes)
    assert not [n for n in names if any(ch.isdigit() for ch in n)]
    assert len({field_types(module, n).get("slot") for n in names} - {None}) == 3


@pytest.mark.xfail(
    strict=True,
    reason="on a clash the first role (in property order) keeps the bare name: East.rack is "
    "'Rack' but West.rack is 'WestRack', so 'Rack' misleads and renames when a field is added",
)
def test_clashing_roles_are_all_qualified() -> None:
    module = plan(_obj(east=_obj(rack=_obj(size=INT)), west=_obj(rack=_obj(count=INT))))
    assert field_types(module, "East") == {"rack": "EastRack | None"}
    assert field_types(module, "West") == {"rack": "WestRack | None"}


def test_reserved_names_are_qualified() -> None:
    module = plan(
        _obj(container=_obj(volume=STRING), quantity=_obj(amount=INT)),
        reserved=frozenset({"Container"}) | HELPER_NAMES,
    )
    assert field_types(module, "ThingSpec") == {
        "container": "ThingContainer | None",
        "quantity": "ThingQuantity | None",
    }


def test_list_and_map_element_classes_are_singular() -> None:
    module = plan(
        _obj(
            workerGroups={"type": "array", "items": _obj(name=STRING, size=INT)},
            zones={"type": "object", "additionalProperties": _obj(capacity=INT)},
        )
    )
    assert field_types(module, "ThingSpec") == {
        "workerGroups": "list[WorkerGroup] | None",
        "zones": "dict[str, Zone] | None",
    }


def test_kinds_with_identical_schemas_keep_their_own_classes() -> None:
    schema = _obj(spec=_obj(size=INT))
    roots = [(kind, parse_schema(schema)) for kind in ("Thing", "ClusterThing")]
    planner = FamilyPlanner("example.v1", "example.flarekit.dev", "v1", set())
    module = planner.plan(roots, lambda node: ("core.v1", "X"), [])
    assert {"Thing", "ClusterThing"} <= set(module.classes)
    assert module.classes["Thing"].root is not None
    assert module.classes["ClusterThing"].root is not None
