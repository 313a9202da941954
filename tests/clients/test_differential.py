"""The same script through each client, against FakeCluster with its simulated operators and
against the control plane with the real operators at the same releases.

Every operation must agree (see differential.py for what agreeing means) except those listed
in KNOWN, each also listed in docs/fakecluster.md with a test that shows it on both backends;
at least 98% of a client's operations must agree, listed ones counted as differences. The real
side is live when the operators are built, and then the recorded outcomes in golden/ must
equal it too (they are what the suite compares with where the operators are not built);
otherwise the recorded outcomes stand in, and must come from the pinned releases.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from differential import Outcome, agree
from differential_backends import (
    CLIENTS,
    RealSide,
    load_golden,
    pinned_operators,
    pinned_server,
    run_script,
)
from script import SCRIPT

#: (client, operation) -> why FakeCluster answers differently (see docs/fakecluster.md).
KNOWN: dict[tuple[str, str], str] = {}

#: (client, operation) -> why the client raises on both sides, which then counts as agreeing.
CLIENT_ERRORS: dict[tuple[str, str], str] = {
    ("lightkube", "events through events.k8s.io"): (
        "lightkube's events.k8s.io/v1 Event model requires eventTime, which kube-apiserver "
        "answers null for an Event made through the core API (msgspec's ValidationError)"
    ),
}

#: The share of a client's operations that must agree.
THRESHOLD = 0.98

#: Per-client figures, printed at the end of the run (see conftest's terminal summary).
FIGURES: dict[str, str] = {}


@cache
def _outcomes(client: str, kubeconfig: Path) -> tuple[Outcome, ...]:
    return tuple(run_script(client, kubeconfig))


def _differences(
    client: str,
    fake: tuple[Outcome, ...] | list[Outcome],
    real: tuple[Outcome, ...] | list[Outcome],
) -> tuple[int, list[tuple[Outcome, Outcome]]]:
    assert [o.op for o in fake] == [o.op for o in real], "the script changed: re-record golden/"
    pairs = [(f, r) for f, r in zip(fake, real, strict=True) if not (f.ok is None and r.ok is None)]
    different = [(f, r) for f, r in pairs if not agree(f, r, (client, f.op) in CLIENT_ERRORS)]
    return len(pairs), different


def _report(pairs: list[tuple[Outcome, Outcome]]) -> str:
    return "\n".join(f"  FakeCluster: {f}\n  real:        {r}" for f, r in pairs)


@pytest.mark.timeout(900)  # two whole scripts, kubectl's a process per operation
@pytest.mark.parametrize("client", CLIENTS)
def test_client_behaves_as_against_the_real_operators(
    client: str, simulated_kubeconfig: Path, real: RealSide | None
) -> None:
    fake = _outcomes(client, simulated_kubeconfig)
    if real is not None:
        expected, source = list(_outcomes(client, real.kubeconfig)), "the live real side"
    else:
        recorded_from, expected = load_golden(client)
        source = f"the outcomes recorded from {recorded_from}"
    total, different = _differences(client, fake, expected)
    agreeing = total - len(different)
    FIGURES[client] = f"{agreeing}/{total} operations agree ({100 * agreeing / total:.1f}%)"
    unexpected = [(f, r) for f, r in different if (client, f.op) not in KNOWN]
    assert not unexpected, f"{client} against FakeCluster vs {source}:\n" + _report(unexpected)
    assert agreeing >= THRESHOLD * total, FIGURES[client]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("client", CLIENTS)
def test_recorded_outcomes_are_the_real_sides(client: str, real: RealSide | None) -> None:
    """golden/ holds what the real side answers now, from the releases the repository pins."""
    recorded_from, recorded = load_golden(client)
    if real is None:
        pinned = {"server": pinned_server(), "operators": pinned_operators()}
        assert recorded_from == pinned, "golden/ is from other releases: `make differential-golden`"
        return
    if real.source is None:
        pytest.skip("a reference cluster the suite did not start: its releases are unknown")
    assert recorded_from == real.source, "golden/ is from other releases: re-record it"
    live = _outcomes(client, real.kubeconfig)
    _, different = _differences(client, recorded, live)
    assert not different, "golden/ differs from the live run (`make differential-golden`):\n" + (
        _report([(r, live_) for r, live_ in different])
    )


def test_listed_differences_name_real_operations() -> None:
    ops = {name for name, _ in SCRIPT}
    assert all(c in CLIENTS and op in ops for c, op in {*KNOWN, *CLIENT_ERRORS})
