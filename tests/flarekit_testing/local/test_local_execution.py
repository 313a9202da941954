"""Local execution for real: the inner tests of local_inner.py (a two-node torch all_reduce,
a Ray cluster with a RayJob and Ray's own job API, stopping jobs and clusters without a
trace, ``flarekit dev up`` / ``dev down``, and the walkthrough training with two seeds) run in
a network and PID namespace of their own, since Ray and torch.distributed bind beyond
loopback. This checks their outcome, test by test.

PyTorch comes from the virtualenv ``make torch-venv`` (``flarekit dev setup``) puts in the
user's cache, Ray from the dev extra; without them the test is skipped with the reason,
except in CI (``CI=true``), where it fails.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from flarekit_testing.local import find_torch
from netns_support import in_ci, require_namespaces, run_inner_tests

HERE = Path(__file__).parent
REQUIRED = {
    "test_a_two_node_trainjob_all_reduces_for_real",
    "test_stopping_a_running_trainjob_ends_its_processes",
    "test_a_ray_cluster_runs_ray_jobs_and_goes_without_a_trace",
    "test_the_walkthrough_trains_for_real_and_its_seed_changes_the_losses",
}


def _need(what: str | None) -> None:
    if what is not None:
        if in_ci():
            pytest.fail(f"CI=true: {what}", pytrace=False)
        pytest.skip(what)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_local_execution_for_real(tmp_path: Path) -> None:
    require_namespaces()
    _need(None if importlib.util.find_spec("ray") else "Ray is not installed (the dev extra)")
    torch, why = find_torch()
    _need(why if torch is None else None)
    run, outcomes = run_inner_tests(
        HERE / "local_inner.py",
        tmp_path / "inner.xml",
        env={"FLAREKIT_TORCH_VENV": str(torch)},
    )
    output = f"{run.stdout}\n{run.stderr}"
    missing = REQUIRED - outcomes.keys()
    assert not missing, f"inner tests not run: {sorted(missing)}\n{output[-8000:]}"
    failed = {name: o for name, o in outcomes.items() if o != "passed"}
    assert failed == {} and run.returncode == 0, output[-15000:]
