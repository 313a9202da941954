"""Which etcd keys a saved control-plane state keeps, and where it is kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from flarekit_testing.controlplane import _state as _cp_state


@pytest.mark.parametrize(
    ("key", "kept"),
    [
        (b"/registry/apiextensions.k8s.io/customresourcedefinitions/rayjobs.ray.io", True),
        (b"/registry/clusterroles/admin", True),
        (b"/registry/namespaces/kube-system", True),
        (b"/registry/leases/kube-system/apiserver-abc", False),
        (b"/registry/events/default/x.1", False),
        (b"/registry/configmaps/default/kube-root-ca.crt", False),
        (b"/registry/configmaps/default/settings", True),
    ],
)
def test_per_run_keys_are_left_out(key: bytes, kept: bool) -> None:
    assert _cp_state._kept(key) is kept


def test_the_place_depends_on_the_programs_and_the_exact_crds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLAREKIT_CACHE_DIR", str(tmp_path / "cache"))
    program = tmp_path / "kube-apiserver"
    program.write_text("one")
    crd = {"metadata": {"name": "a"}, "spec": {"group": "g"}}
    first = _cp_state.state_path([program], [crd])
    assert first.parent == tmp_path / "cache" / "controlplane-state"
    assert _cp_state.state_path([program], [dict(reversed(crd.items()))]) == first
    assert _cp_state.state_path([program], [{**crd, "spec": {"group": "h"}}]) != first
    program.write_text("rebuilt")
    assert _cp_state.state_path([program], [crd]) != first


def test_a_missing_or_foreign_copy_is_not_used(tmp_path: Path) -> None:
    assert _cp_state.load("http://127.0.0.1:9", tmp_path / "absent.json") is None
    other = tmp_path / "other.json"
    other.write_text('{"format": 0, "kvs": []}')
    assert _cp_state.load("http://127.0.0.1:9", other) is None
    other.write_text("not json")
    assert _cp_state.load("http://127.0.0.1:9", other) is None
    for broken in ('{"format": 1}', '{"format": 1, "kvs": [{"key": 1}]}'):
        other.write_text(broken)  # a truncated or hand-edited copy: installed afresh instead
        assert _cp_state.load("http://127.0.0.1:9", other) is None
