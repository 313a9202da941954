"""`apply_all` when writes lose their answers and calls overlap: a failed call removes only
what it created and nobody relied on since, waits for a write whose answer was lost, names
what it could not remove in the error itself, and two overlapping calls leave exactly the
objects of the calls that succeeded."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest

from flarekit import ApiUnavailable, Client, RetryPolicy, ServerError, from_kubeconfig
from flarekit._rollback import MARK
from flarekit.kueue import (
    AdminSpec,
    ClusterQueueSpec,
    LocalQueueSpec,
    ResourceFlavorSpec,
    RollbackIncomplete,
    apply_all,
)
from flarekit_testing import FakeCluster
from flarekit_testing.apiserver._faults import RecordedRequest
from wait_support import wait_until


@pytest.fixture(scope="module")
def fc() -> Iterator[FakeCluster]:
    with FakeCluster(releases={"kueue": "v0.19.2"}) as cluster:
        yield cluster


def _client(fc: FakeCluster, timeout: float = 30.0, attempts: int = 5) -> Client:
    return Client(
        from_kubeconfig(fc.kubeconfig_path),
        timeout=timeout,
        retry=RetryPolicy(attempts=attempts, backoff=0.01),
    )


def _write_of(name: str, method: str = "PATCH") -> Callable[[RecordedRequest], bool]:
    return lambda r: r.method == method and r.path.rsplit("/", 1)[-1] == name


def _setup(prefix: str, namespace: str, flavor: str | None = None) -> list[AdminSpec]:
    flavor = flavor or f"{prefix}-flavor"
    return [
        ResourceFlavorSpec(flavor),
        ClusterQueueSpec(f"{prefix}-cq", {flavor: {"cpu": 1}}),
        LocalQueueSpec(f"{prefix}-lq", namespace, f"{prefix}-cq"),
    ]


def _present(fc: FakeCluster, namespace: str, *names: str) -> dict[str, bool]:
    kinds = {"flavor": "resourceflavors", "cq": "clusterqueues", "lq": "localqueues"}
    found = {}
    for name in names:
        plural = kinds[name.rsplit("-", 1)[-1]]
        ns = namespace if plural == "localqueues" else None
        found[name] = fc.get(plural, name, ns) is not None
    return found


def _landed(fc: FakeCluster, name: str, count: int) -> None:
    """Wait until `count` writes of `name` were answered: the server records a request once
    it has carried it out, so after this no write of it is still in flight."""
    wait_until(
        lambda: sum(1 for r in fc.requests if _write_of(name)(r)) >= count,
        f"{count} write(s) of {name} carried out",
    )


def test_a_write_that_lands_after_its_timeout_is_still_removed(fc: FakeCluster, ns: str) -> None:
    fc.delay(_write_of("late-cq"), 0.6, times=1)
    try:
        with _client(fc, timeout=0.4, attempts=1) as client, pytest.raises(ApiUnavailable):
            apply_all(client, _setup("late", ns))
    finally:
        fc.clear_faults()
    _landed(fc, "late-cq", 1)  # the one write, held back 0.6 s
    assert _present(fc, ns, "late-flavor", "late-cq", "late-lq") == {
        "late-flavor": False,
        "late-cq": False,
        "late-lq": False,
    }


def test_a_retried_write_whose_first_attempt_landed_is_removed_on_failure(
    fc: FakeCluster,
    ns: str,
) -> None:
    fc.delay(_write_of("retry-cq"), 0.5, times=1)
    fc.inject(_write_of("retry-lq"), status=500, times=None)
    try:
        with _client(fc, timeout=0.3, attempts=3) as client, pytest.raises(ServerError):
            apply_all(client, _setup("retry", ns))
    finally:
        fc.clear_faults()
    _landed(fc, "retry-cq", 2)  # the first attempt, held back, and the answered retry
    assert not any(_present(fc, ns, "retry-flavor", "retry-cq", "retry-lq").values())


def test_what_cannot_be_removed_is_named_in_the_error_message(fc: FakeCluster, ns: str) -> None:
    fc.inject(_write_of("stuck-lq"), status=500, times=None)
    fc.inject(_write_of("stuck-flavor", "DELETE"), status=500, times=None)
    try:
        with _client(fc, attempts=1) as client, pytest.raises(RollbackIncomplete) as info:
            apply_all(client, _setup("stuck", ns))
    finally:
        fc.clear_faults()
    text = str(info.value)
    assert "stuck-lq" in text  # the original failure
    assert "ResourceFlavor 'stuck-flavor': could not be deleted" in text
    assert isinstance(info.value.error, ServerError)
    assert isinstance(info.value.__cause__, ServerError)
    assert _present(fc, ns, "stuck-flavor", "stuck-cq") == {
        "stuck-flavor": True,
        "stuck-cq": False,
    }
    assert f"its {MARK} annotation was removed" in text
    flavor = fc.get("resourceflavors", "stuck-flavor") or {}
    assert MARK not in (flavor["metadata"].get("annotations") or {})  # no call creates it now


def test_a_write_whose_answer_never_comes_is_reported_not_forgotten(
    fc: FakeCluster, ns: str
) -> None:
    fc.inject(_write_of("lost-cq"), status=504, times=None)
    try:
        client = _client(fc, timeout=0.2, attempts=1)
        with client, pytest.raises(RollbackIncomplete) as info:
            apply_all(client, _setup("lost", ns))
    finally:
        fc.clear_faults()
    assert "ClusterQueue 'lost-cq': its write got no answer" in str(info.value)
    assert not any(_present(fc, ns, "lost-flavor", "lost-cq").values())


def _overlap(
    fc: FakeCluster, ns: str, slow: str, fast: str, flavor: str
) -> tuple[BaseException | None, BaseException | None]:
    """Call `slow` creates the shared `flavor`, then waits 0.8 s on its ClusterQueue; call
    `fast` runs its whole setup meanwhile. The error each ended with (None: succeeded)."""
    outcome: dict[str, BaseException | None] = {slow: None, fast: None}

    def run(name: str, client: Client) -> None:
        try:
            apply_all(client, _setup(name, ns, flavor))
        except Exception as exc:
            outcome[name] = exc

    fc.delay(_write_of(f"{slow}-cq"), 0.8, times=1)
    try:
        with _client(fc) as slow_client, _client(fc) as fast_client:
            thread = threading.Thread(target=run, args=(slow, slow_client))
            thread.start()
            wait_until(lambda: fc.get("resourceflavors", flavor), f"{slow} created {flavor}")
            run(fast, fast_client)
            thread.join(10)
    finally:
        fc.clear_faults()
    return outcome[slow], outcome[fast]


def _unmarked(fc: FakeCluster, flavor: str) -> bool:
    stored = fc.get("resourceflavors", flavor)
    return stored is not None and MARK not in (stored["metadata"].get("annotations") or {})


def test_overlapping_calls_leave_exactly_the_objects_of_the_one_that_succeeded(
    fc: FakeCluster,
    ns: str,
) -> None:
    """B creates the shared flavor and fails later; A, started after B created it, succeeds:
    B's rollback must not take the flavor A relies on."""
    fc.inject(_write_of("b-lq"), status=500, times=None)
    b_error, a_error = _overlap(fc, ns, "b", "a", "shared")
    assert isinstance(b_error, ServerError) and a_error is None
    assert _present(fc, ns, "a-cq", "a-lq", "b-cq", "b-lq") == {
        "a-cq": True,
        "a-lq": True,
        "b-cq": False,
        "b-lq": False,
    }
    assert _unmarked(fc, "shared"), "the flavor the successful call uses is gone or marked"


def test_overlapping_calls_that_both_fail_leave_nothing(fc: FakeCluster, ns: str) -> None:
    fc.inject(_write_of("d-lq"), status=500, times=None)
    fc.inject(_write_of("c-lq"), status=500, times=None)
    d_error, c_error = _overlap(fc, ns, "d", "c", "both")
    assert isinstance(d_error, ServerError) and isinstance(c_error, ServerError)
    assert fc.get("resourceflavors", "both") is None
    assert not any(_present(fc, ns, "c-cq", "d-cq").values())


def test_the_creator_succeeding_keeps_what_a_failed_overlapping_call_also_applied(
    fc: FakeCluster,
    ns: str,
) -> None:
    """E creates the shared flavor and succeeds late; F takes it over meanwhile and fails:
    F's rollback deletes it (it carried F's mark), and E's confirmation brings it back."""
    fc.inject(_write_of("f-lq"), status=500, times=None)
    e_error, f_error = _overlap(fc, ns, "e", "f", "mine")
    assert e_error is None and isinstance(f_error, ServerError)
    assert _present(fc, ns, "e-cq", "e-lq", "f-cq") == {"e-cq": True, "e-lq": True, "f-cq": False}
    assert _unmarked(fc, "mine")
