"""Negotiation works each CRD out once: the pinned releases once per process (also when
threads ask at once), a served CRD once per distinct content, so a second client of the
same server only reads."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from negotiate_support import client_of

from flarekit.compat import _crd_match, family_release, negotiate
from flarekit.compat._crd_match import (
    _Once,
    analyse,
    crd_model,
    fingerprint,
    pinned_fingerprints,
    served_crd,
)
from flarekit_models._crds import crds_for
from flarekit_testing import FakeCluster

RELEASES = {"kuberay": "v1.7.0", "kueue": "v0.19.2"}


def _count_analyses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the CRDs analysed from now on."""
    seen: list[str] = []

    def counting(crd: Any) -> Any:
        seen.append(crd_model(crd).metadata.name)
        return analyse(crd)

    monkeypatch.setattr(_crd_match, "analyse", counting)
    return seen


def test_a_second_client_of_the_same_server_analyses_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeCluster(releases=RELEASES) as fc:
        first = negotiate(client_of(fc), ["kuberay", "kueue"])
        analysed = _count_analyses(monkeypatch)
        fc.clear_requests()
        second = negotiate(client_of(fc), ["kuberay", "kueue"])
        crd_reads = [r for r in fc.requests if "customresourcedefinitions" in r.path]
    assert analysed == []
    assert crd_reads  # it still asks the server: the CRDs may have changed
    for name in ("kuberay", "kueue"):
        assert second[name] == first[name]
        assert second[name].crd_paths == first[name].crd_paths


def test_a_changed_crd_is_analysed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    crds = crds_for({"kuberay": "v1.7.0"})
    with FakeCluster(crds=crds) as fc:
        before = family_release(client_of(fc), "kuberay")
    analysed = _count_analyses(monkeypatch)
    [rayclusters] = [c for c in crds if c["metadata"]["name"] == "rayclusters.ray.io"]
    for version in rayclusters["spec"]["versions"]:
        version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"].pop(
            "managedBy", None
        )
    with FakeCluster(crds=crds) as fc:
        after = family_release(client_of(fc), "kuberay")
    assert analysed == ["rayclusters.ray.io"]  # the other CRDs are the same bytes as before
    assert before.exact and not after.exact
    assert after.crd_paths is not None and "spec.managedBy" not in (
        after.crd_paths["ray.io/v1 RayCluster"]
    )


def test_the_cache_key_is_the_content_not_the_name() -> None:
    crd = crds_for({"kuberay": "v1.7.0"})[0]
    body = json.dumps(crd).encode()
    moved = json.dumps({**crd, "metadata": {**crd["metadata"], "resourceVersion": "9"}}).encode()
    assert served_crd(body) is served_crd(body)
    other = served_crd(moved)
    assert other is not served_crd(body)  # other bytes: analysed on their own ...
    assert other.fingerprint == served_crd(body).fingerprint  # ... to the same schemas
    with pytest.raises(ValueError):
        served_crd(b"[1, 2]")


def test_fingerprints_ignore_descriptions_and_key_order() -> None:
    crd = crds_for({"kueue": "v0.19.2"})[0]
    described = json.loads(json.dumps(crd))
    described["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] = "reworded"
    reordered = json.loads(json.dumps(crd, sort_keys=True))
    assert fingerprint(described) == fingerprint(crd) == fingerprint(reordered)
    narrowed = json.loads(json.dumps(crd))
    narrowed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"].pop("spec")
    assert fingerprint(narrowed) != fingerprint(crd)


def test_pinned_fingerprints_are_those_of_the_pinned_crds() -> None:
    pinned = pinned_fingerprints("kuberay", "v1.1.1")
    crds = crds_for({"kuberay": "v1.1.1"})
    assert dict(pinned) == {c["metadata"]["name"]: fingerprint(c) for c in crds}
    assert pinned_fingerprints("kuberay", "v1.1.1") is pinned  # worked out once


def test_once_computes_a_value_once_when_threads_ask_together() -> None:
    once = _Once()
    calls: list[int] = []
    start = threading.Barrier(8)
    results: list[object] = []

    def slow() -> object:
        calls.append(1)
        time.sleep(0.05)  # long enough for every thread to arrive while it runs
        return object()

    def ask() -> None:
        start.wait()
        results.append(once.get("key", slow))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert len(results) == 8 and all(r is results[0] for r in results)
    assert once.get("other", lambda: 2) == 2 and len(calls) == 1
