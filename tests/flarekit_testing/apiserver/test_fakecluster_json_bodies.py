"""Bodies kube-apiserver's JSON decoder refuses or reads its own way, on both backends.

Found by checking FakeCluster's admission against the real API server on fuzzed objects
(tests/fuzz): NaN and Infinity, numbers beyond float64 and nesting past 10,000 levels are a
400 before any validation; integers beyond int64 are read as float64; numbers outside their
``int32`` or ``float`` format are refused in a cause without a field. FakeCluster took the
first three and stored them. What FakeCluster still cannot do is follow an object nested
thousands of levels deep (Python's recursion limit): it says so in a 500, where the real
server takes up to 10,000 levels (docs/fakecluster.md, "Known differences").
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import urllib3

from flarekit_testing import FakeCluster

HEAD = (
    '{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"%s"},'
    '"spec":{"headGroupSpec":{"rayStartParams":{},"template":{"spec":{"containers":'
    '[{"name":"ray","image":"rayproject/ray:2.9.0"%s}]}}}%s}}'
)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[FakeCluster]:
    """A FakeCluster serving the default releases, as the session's control plane does."""
    with FakeCluster() as fc:
        yield fc


@pytest.fixture(params=["fakecluster", "controlplane"])
def server(request: pytest.FixtureRequest, ray_cluster: FakeCluster) -> Any:
    if request.param == "fakecluster":
        return ray_cluster
    return request.getfixturevalue("control_plane")


def _post(server: Any, container: str = "", spec: str = "") -> tuple[int, dict[str, Any]]:
    """A dry-run create of a RayCluster with `container` and `spec` text added."""
    text = HEAD % (f"json-{uuid.uuid4().hex[:8]}", container, spec)
    pool = urllib3.PoolManager(ca_certs=str(server.ca_path))
    answer = pool.request(
        "POST",
        server.url + "/apis/ray.io/v1/namespaces/default/rayclusters?dryRun=All",
        body=text.encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {server.token}"},
        retries=False,
    )
    return answer.status, json.loads(answer.data)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(server: Any, literal: str) -> None:
    code, status = _post(server, spec=f',"unknownField":{literal}')
    assert code == 400, status
    assert f"json parse error: invalid character '{literal.lstrip('-')[0]}'" in status["message"]


def test_a_number_beyond_float64_cannot_be_decoded(server: Any) -> None:
    code, status = _post(server, spec=',"unknownField":1' + "0" * 400)
    assert code == 400, status
    assert "cannot unmarshal number 1000" in status["message"]
    assert "into Go value of type float64" in status["message"]


def test_an_integer_beyond_int64_is_read_as_a_float64(server: Any) -> None:
    code, status = _post(server, container=',"ports":[{"containerPort":1' + "0" * 20 + "}]")
    assert code == 422, status
    assert 'containerPort in body must be of type int32: "float64"' in status["message"]


def test_nesting_past_10000_levels_is_refused(server: Any) -> None:
    deep = '{"a":' * 10_000 + "{}" + "}" * 10_000
    code, status = _post(server, spec=f',"unknownField":{deep}')
    assert code == 400, status
    assert "exceeded max depth" in status["message"]


@pytest.mark.parametrize(("value", "fits"), [(2**31 - 1, True), (2**31, False)])
def test_a_number_outside_its_int32_format_is_refused(server: Any, value: int, fits: bool) -> None:
    code, status = _post(server, container=f',"ports":[{{"containerPort":{value}}}]')
    if fits:
        assert code == 201, status
        return
    assert code == 422, status
    place = "spec.headGroupSpec.template.spec.containers[0].ports[0].containerPort"
    assert {"reason": "FieldValueInvalid", "field": "<nil>"}.items() <= status["details"]["causes"][
        0
    ].items()
    assert status["details"]["causes"][0]["message"] == (
        f'Invalid value: "": Checked value must be of type integer with format int32 in {place}'
    )


def test_thousands_of_levels(server: Any) -> None:
    """The real server takes an object nested 3,000 levels; FakeCluster says in a 500 that it
    cannot follow it (a known difference), instead of dropping the connection."""
    deep = '{"a":' * 3_000 + "{}" + "}" * 3_000
    code, status = _post(server, spec=f',"unknownField":{deep}')
    if isinstance(server, FakeCluster):
        assert code == 500, status
        assert "FakeCluster cannot follow an object nested this deep" in status["message"]
        assert "the real API server takes up to 10,000 levels" in status["message"]
    else:
        assert code == 201, status
