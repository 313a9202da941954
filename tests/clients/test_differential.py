"""The same script through each client, against FakeCluster and against kube-apiserver.

Every operation's outcome (success and the fields that matter, or status code and reason)
must be the same on both, except the differences listed in KNOWN (each also listed in
docs/fakecluster.md), and at least 95% of a client's operations must agree. The real side
is live when a control plane is available, else the outcomes recorded from one (golden/).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict
from pathlib import Path

import pytest
from differential import Outcome, run
from differential_backends import CLIENTS, adapter

GOLDEN = Path(__file__).parent / "golden"

#: (client, operation) -> why FakeCluster answers differently (see docs/fakecluster.md).
KNOWN: dict[tuple[str, str], str] = {}

#: Per-client figures, printed at the end of the run (see conftest's terminal summary).
FIGURES: dict[str, str] = {}


def load_golden(client: str) -> list[Outcome]:
    path = GOLDEN / f"{client}.json"
    if not path.exists():
        pytest.fail(f"{path} is missing: record it with `make differential-golden`")
    return [Outcome(**o) for o in json.loads(path.read_text())]


def save_golden(client: str, outcomes: list[Outcome]) -> None:
    GOLDEN.mkdir(exist_ok=True)
    text = json.dumps([asdict(o) for o in outcomes], indent=1, sort_keys=True)
    (GOLDEN / f"{client}.json").write_text(text + "\n")


def _run(client: str, kubeconfig: Path) -> list[Outcome]:
    made = adapter(client, kubeconfig)
    try:
        return run(made, f"diff-{client}-{uuid.uuid4().hex[:6]}")
    finally:
        close = getattr(made, "close", None)
        if close is not None:
            close()


@pytest.mark.parametrize("client", CLIENTS)
def test_client_behaves_as_against_kube_apiserver(
    client: str, fake_kubeconfig: Path, real_kubeconfig: Path | None
) -> None:
    fake = _run(client, fake_kubeconfig)
    if real_kubeconfig is not None:
        real, source = _run(client, real_kubeconfig), "live kube-apiserver"
    else:
        real, source = load_golden(client), "recorded kube-apiserver outcomes"
    assert [o.op for o in fake] == [o.op for o in real], "the script changed: re-record golden/"
    pairs = [(f, r) for f, r in zip(fake, real, strict=True) if not (f.ok is None and r.ok is None)]
    different = [(f, r) for f, r in pairs if f != r]
    agree = len(pairs) - len(different)
    FIGURES[client] = f"{agree}/{len(pairs)} operations agree ({100 * agree / len(pairs):.1f}%)"
    unexpected = [(f, r) for f, r in different if (client, f.op) not in KNOWN]
    assert not unexpected, f"{client} against FakeCluster vs {source}:\n" + "\n".join(
        f"  FakeCluster: {f}\n  real:        {r}" for f, r in unexpected
    )
    assert agree >= 0.95 * len(pairs)


def test_known_differences_name_real_operations() -> None:
    from differential import SCRIPT

    ops = {name for name, _ in SCRIPT}
    assert all(c in CLIENTS and op in ops for c, op in KNOWN)
