"""What the simulated operators tolerate, as the real controllers do (they log and requeue)."""

from __future__ import annotations

import pytest

from flarekit_testing.apiserver import _errors
from flarekit_testing.operators._base import _moved_on, namespace_terminating


def _refused(reason: str) -> _errors.ApiError:
    cause = _errors.Cause(reason, "namespace team is being terminated", "metadata.namespace")
    return _errors.forbidden("workloads", "kueue.x-k8s.io", "w", "unable to create", [cause])


def test_creating_into_a_terminating_namespace_is_tolerated() -> None:
    assert namespace_terminating(_refused("NamespaceTerminating"))
    with _moved_on():
        raise _refused("NamespaceTerminating")


def test_other_refusals_still_fail() -> None:
    assert not namespace_terminating(_refused("SomethingElse"))
    with pytest.raises(_errors.ApiError), _moved_on():
        raise _refused("SomethingElse")
