"""Fixtures every test folder may use: the real control plane, shared by the whole session.

`control_plane` is one `flarekit_testing.ControlPlane` (real etcd, kube-apiserver, controllers,
scheduler and KWOK nodes, serving the default upstream releases) for the whole run; tests take
their own namespace in it. Its binaries come from `FLAREKIT_CONTROLPLANE_ASSETS` or
`KUBEBUILDER_ASSETS` when set, else from the cache that `make control-plane` fills. When they
are missing the tests that need them are skipped with the reason, except in CI (`CI=true`),
where a control plane that cannot be built or started fails the run.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from build_parts import after_builds, pytest_addoption, pytest_collection_modifyitems  # noqa: F401
from ci_skips import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401
from flarekit_testing import ControlPlane, OperatorNotBuilt
from flarekit_testing.pytest_plugin import (  # noqa: F401 - every test: no operator raised
    pytest_configure,
    simulated_operators_raised_nothing,
)

REPO = Path(__file__).resolve().parents[1]


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def built_controlplane() -> tuple[Path | None, str]:
    """The bin folder `make control-plane` builds for this checkout's pins, and if it is
    missing, why."""
    for env in ("FLAREKIT_CONTROLPLANE_ASSETS", "KUBEBUILDER_ASSETS"):
        if os.environ.get(env):
            return Path(os.environ[env]), ""
    go = shutil.which("go")
    if go is None:
        return None, "Go is not installed: the real control plane cannot be built here"
    spec = importlib.util.spec_from_file_location(
        "controlplane_build", REPO / "controlplane" / "build.py"
    )
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = build  # dataclasses look their module up there
    spec.loader.exec_module(build)
    folder = (
        Path(build.Module("controlplane", REPO / "controlplane").directory(build.go_version(go)))
        / "bin"
    )
    if not (folder / ".complete").exists():
        return None, f"the control plane is not built: run `make control-plane` (expected {folder})"
    return folder, ""


def need_controlplane() -> Path:
    folder, why = built_controlplane()
    if folder is None:
        if in_ci():
            pytest.fail(f"CI=true: {why}", pytrace=False)
        pytest.skip(why)
    return folder


def need_real_node() -> None:
    """Skip (fail in CI) unless a real node can run here: root, Debian's containerd, runc
    and CNI plugins, and the kubelet, CoreDNS and images `make real-node` builds."""
    from flarekit_testing.controlplane import NodeNotReady, find_node_assets

    try:
        find_node_assets()
    except NodeNotReady as exc:
        if in_ci():
            pytest.fail(f"CI=true: {exc}", pytrace=False)
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def real_node_ready(request: pytest.FixtureRequest) -> None:
    """Skips (fails in CI) the test unless a real node can run here (see `need_real_node`)."""
    after_builds(request, "the real node's programs and images")
    need_real_node()


@pytest.fixture(scope="session")
def controlplane_binaries(request: pytest.FixtureRequest) -> Path:
    """The folder with the control plane's programs (skips, or fails in CI, without it)."""
    after_builds(request, "the control plane's programs")
    return need_controlplane()


@pytest.fixture(scope="session")
def operator_builds(request: pytest.FixtureRequest) -> dict[str, str]:
    """The newest built release of each operator family (none where a family has no build):
    for tests that read the operator builds (which releases, their upstream installs)."""
    from flarekit_testing.controlplane._operators import FAMILIES, built_versions

    after_builds(request, "the operators' builds")
    newest = {family: built_versions(family) for family in FAMILIES}
    return {family: found[-1] for family, found in newest.items() if found}


@pytest.fixture(scope="session")
def control_plane(controlplane_binaries: Path) -> Iterator[ControlPlane]:
    """The session's real control plane (default upstream releases, two fake GPU nodes)."""
    with ControlPlane(binaries=controlplane_binaries) as plane:
        yield plane


#: Every operator family the control plane can run (the end-to-end tests and the client
#: differential use them all).
OPERATORS = ("kuberay", "kueue", "jobset", "trainer", "appwrapper", "training-operator")


def built_operator_releases() -> dict[str, str]:
    """The newest built release of each operator family (what `make control-plane` builds);
    skips, or fails in CI, when one is missing."""
    from flarekit_testing.controlplane._operator_runner import versions_for

    try:
        return versions_for(OPERATORS, None)
    except OperatorNotBuilt as exc:
        if in_ci():
            pytest.fail(f"CI=true: {exc}", pytrace=False)
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def operator_plane(controlplane_binaries: Path) -> Iterator[ControlPlane]:
    """The session's control plane with every real operator, at the newest built releases
    (started once, on first use, and shared by every folder that compares against the real
    operators)."""
    releases = built_operator_releases()
    # Every operator's CRDs and webhooks: on a busy 2-core machine the API server takes
    # minutes to establish them all, so the start is given more than the default minute.
    with ControlPlane(
        releases=releases,
        operators=OPERATORS,
        binaries=controlplane_binaries,
        pod_run_time=1.0,
        start_timeout=600.0,
    ) as plane:
        yield plane
