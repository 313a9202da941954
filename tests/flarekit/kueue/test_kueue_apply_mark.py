"""`apply_all`'s mark never locks an object, on FakeCluster and on the real API server: a mark
left behind by a call of another field manager (its rollback could not delete, it died after
its first write) does not make the next call fail with a conflict over the annotation; a
rollback that cannot delete removes its mark; a mark whose call has ended is ignored (the
object counts as settled: not another call's to remove) and cleaned away."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator

import pytest

from flarekit import Client, ServerError, from_kubeconfig
from flarekit._rollback import MARK, Mark
from flarekit.client._served import preferred_kueue_version
from flarekit.kueue import (
    AdminSpec,
    ClusterQueueSpec,
    LocalQueueSpec,
    ResourceFlavorSpec,
    RollbackIncomplete,
    apply_all,
)
from flarekit_testing import ControlPlane, FakeCluster, rule
from kube_support import FAST_RETRY, new_namespace

Server = FakeCluster | ControlPlane
KUEUE = "kueue.x-k8s.io"
READ = rule(verb=["get", "list", "watch"])


@pytest.fixture(scope="module", params=["fake", "real"])
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    if request.param == "real":
        yield request.getfixturevalue("control_plane")
        return
    with FakeCluster(releases={"kueue": "v0.19.2"}) as fc:
        yield fc


def _as(server: Server, who: str, *rules: object) -> Client:
    """A client of a new user `who` (an administrator without `rules`), managing fields as
    `who`."""
    user = f"{who}-{uuid.uuid4().hex[:6]}"
    token = server.add_user(user, allow=list(rules) if rules else None)  # type: ignore[arg-type]
    credentials = from_kubeconfig(server.kubeconfig_path)
    credentials.configuration.api_key = {"authorization": f"Bearer {token}"}
    credentials.configuration.refresh_api_key_hook = None
    return Client(credentials, field_manager=who, retry=FAST_RETRY)


def _setup(prefix: str, namespace: str) -> list[AdminSpec]:
    return [
        ResourceFlavorSpec(f"{prefix}-flavor"),
        ClusterQueueSpec(f"{prefix}-cq", {f"{prefix}-flavor": {"cpu": 1}}),
        LocalQueueSpec(f"{prefix}-lq", namespace, f"{prefix}-cq"),
    ]


def _annotations(server: Server, plural: str, name: str, namespace: str | None = None) -> dict:
    stored = server.get(plural, name, namespace)
    assert stored is not None, f"{plural}/{name} is missing"
    return dict(stored["metadata"].get("annotations") or {})


def _unique() -> str:
    return f"m{uuid.uuid4().hex[:6]}"


def test_a_rollback_that_cannot_delete_leaves_nothing_in_anyones_way(server: Server) -> None:
    ns, prefix = new_namespace(server), _unique()
    # Alice may write flavors and ClusterQueues, but neither delete them nor write LocalQueues:
    # her call fails at the LocalQueue, and her rollback cannot delete what she created.
    writes = rule(["create", "update", "patch"], ["resourceflavors", "clusterqueues"], KUEUE)
    with _as(server, "alice", READ, writes) as alice, pytest.raises(RollbackIncomplete) as info:
        apply_all(alice, _setup(prefix, ns))
    text = str(info.value)
    for kind, name in (("ResourceFlavor", "flavor"), ("ClusterQueue", "cq")):
        assert f"{kind} '{prefix}-{name}': could not be deleted" in text
    assert f"its {MARK} annotation was removed" in text
    assert MARK not in _annotations(server, "resourceflavors", f"{prefix}-flavor")
    assert MARK not in _annotations(server, "clusterqueues", f"{prefix}-cq")
    # Another field manager sets up the same objects: no conflict over anything alice left.
    with _as(server, "bob") as bob:
        applied = apply_all(bob, _setup(prefix, ns))
    assert [a.metadata.name for a in applied] == [  # type: ignore[attr-defined]
        f"{prefix}-flavor",
        f"{prefix}-cq",
        f"{prefix}-lq",
    ]
    assert MARK not in _annotations(server, "localqueues", f"{prefix}-lq", ns)


def _leave_mark(server: Server, name: str, ends: datetime.datetime) -> str:
    """What a call of field manager "alice" leaves when it dies right after its first write:
    flavor `name`, created by server-side apply with alice's mark in it."""
    mark = Mark(uuid.uuid4().hex, ends.replace(microsecond=0))
    with _as(server, "alice") as alice:
        model = ResourceFlavorSpec(name).render(preferred_kueue_version(alice))
        assert model.metadata is not None
        model.metadata.annotations = {MARK: mark.value}
        alice.apply(model)
    assert _annotations(server, "resourceflavors", name)[MARK] == mark.value
    return mark.value


def test_a_live_mark_of_another_manager_is_taken_over_not_fought_over(server: Server) -> None:
    ns, prefix = new_namespace(server), _unique()
    now = datetime.datetime.now(datetime.UTC)
    _leave_mark(server, f"{prefix}-flavor", now + datetime.timedelta(minutes=10))
    with _as(server, "bob") as bob:
        apply_all(bob, _setup(prefix, ns))  # on the real server, before: 409 Conflict
    assert MARK not in _annotations(server, "resourceflavors", f"{prefix}-flavor")


def test_a_mark_whose_call_has_ended_is_ignored_and_cleaned(server: Server) -> None:
    ns, prefix = new_namespace(server), _unique()
    now = datetime.datetime.now(datetime.UTC)
    _leave_mark(server, f"{prefix}-flavor", now - datetime.timedelta(hours=1))
    # Bob may write flavors but not ClusterQueues: his call fails after the flavor. The flavor
    # was there before his call, its mark long ended: his rollback must keep it.
    writes = rule(["create", "update", "patch", "delete"], "resourceflavors", KUEUE)
    with _as(server, "bob", READ, writes) as bob, pytest.raises(Exception) as info:
        apply_all(bob, _setup(prefix, ns))
    assert not isinstance(info.value, (RollbackIncomplete, ServerError)), info.value
    assert server.get("resourceflavors", f"{prefix}-flavor") is not None
    with _as(server, "carol") as carol:
        apply_all(carol, _setup(prefix, ns))
    assert MARK not in _annotations(server, "resourceflavors", f"{prefix}-flavor")


def _owners(server: Server, name: str) -> set[str]:
    """The field managers owning the mark annotation of flavor `name`."""
    stored = server.get("resourceflavors", name) or {}
    key = f"f:{MARK}"
    return {
        entry["manager"]
        for entry in stored["metadata"].get("managedFields") or []
        if key in ((entry.get("fieldsV1") or {}).get("f:metadata", {}).get("f:annotations") or {})
    }


def test_the_mark_changes_only_from_the_value_read(server: Server) -> None:
    """Taking over and releasing are JSON patches that test the mark's value first: a stale
    value changes nothing, and what a takeover writes is owned by no caller's manager."""
    from flarekit._rollback import MARK_MANAGER, release, take_over

    name = f"{_unique()}-flavor"
    ends = datetime.datetime.now(datetime.UTC) + datetime.timedelta(minutes=10)
    first = _leave_mark(server, name, ends)
    assert _owners(server, name) == {"alice"}
    mine = Mark("mine", ends.replace(microsecond=0))
    with _as(server, "bob") as bob:
        model = ResourceFlavorSpec(name).render(preferred_kueue_version(bob))
        assert take_over(bob, model, "not-the-value", mine) is None
        assert release(bob, model, "not-the-value") is None
        assert _annotations(server, "resourceflavors", name)[MARK] == first
        assert take_over(bob, model, first, mine) is not None
        assert _owners(server, name) == {MARK_MANAGER}
        assert release(bob, model, first) is None  # not alice's any more
        assert release(bob, model, mine.value) is not None
        assert MARK not in _annotations(server, "resourceflavors", name)
        assert release(bob, model) is None  # nothing left to remove
        missing = ResourceFlavorSpec(f"{_unique()}-gone").render(preferred_kueue_version(bob))
        assert release(bob, missing) is None and take_over(bob, missing, first, mine) is None
