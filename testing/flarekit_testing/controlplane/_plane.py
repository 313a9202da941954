"""ControlPlane: a real Kubernetes control plane on 127.0.0.1, shaped like FakeCluster.

FakeCluster is written by us; a real kube-apiserver is right by definition. `ControlPlane` runs
the real programs as local processes, the way controller-runtime's envtest does for Go
operators: etcd, kube-apiserver (static tokens and client certificates, RBAC, service-account
tokens, an audit log), kube-controller-manager (namespace lifecycle, garbage collection, Jobs,
service accounts...), kube-scheduler, and KWOK playing the kubelets of fake nodes with the
capacity you choose (see `_kwok`). It installs the CRDs of the chosen upstream releases,
waits until they are Established and the nodes Ready, and writes a kubeconfig.

`operators=["kueue", "kuberay", ...]` also runs the real operators of those families, built from
their pinned releases by `make control-plane`, each as a local process with its upstream RBAC,
configuration and webhooks (see `_operators` and docs/operators.md).

It offers FakeCluster's shape, so one test can take either: `kubeconfig_path`, `url`, `token`,
`api_client()`, `add_user()`, `resource()`, the direct access `create`/`get`/`objects`/`patch`/
`set_status`/`delete`, pods (`add_pod`, `start_pod`, `finish_pod`), and the request log
(`requests`, `request_count`, `clear_requests`) read from the API server's audit log. What only
an emulator can do (fault injection, deny rules, writing container logs) raises
`NotSupportedByRealServer` with what to do instead.

Leaving the `with` block (or `stop()`) ends every process it started and removes its
temporary directory, also when start-up fails halfway.

This module puts the plane together and runs its life (start, stop); each concern is a part of
its own (see `_base`): the processes (`_processes`), certificates (`_certificates`), users and
RBAC (`_users`), what is installed at start (`_seeding`), direct access to objects
(`_objects`), pods (`_pods`) and the request log (`_requests`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import flarekit_models
from flarekit_testing.apiserver import INITIAL_NAMESPACES, release_crds, write_kubeconfig
from flarekit_testing.controlplane import _kwok, _operator_runner, _state
from flarekit_testing.controlplane._assets import Assets, find_assets
from flarekit_testing.controlplane._base import JSON, NotSupportedByRealServer
from flarekit_testing.controlplane._node import (
    NodeAssets,
    PlaneHost,
    RealNode,
    find_node_assets,
    image_names,
)
from flarekit_testing.controlplane._operators import find_build
from flarekit_testing.controlplane._pki import Authority
from flarekit_testing.controlplane._pods import Pods
from flarekit_testing.controlplane._ports import free_port
from flarekit_testing.controlplane._process import Component
from flarekit_testing.controlplane._processes import Processes
from flarekit_testing.controlplane._requests import RequestLog
from flarekit_testing.controlplane._rest import Endpoint, Rest
from flarekit_testing.controlplane._seeding import Seeding
from flarekit_testing.controlplane._users import ADMIN, DIRECT, RESTRICTED, Users

NodePool = _kwok.NodePool
_DEFAULT_NODES = (NodePool(),)


class ControlPlane(Processes, Users, Seeding, Pods, RequestLog):
    """A real control plane (etcd, kube-apiserver, controllers, scheduler, KWOK nodes).

    `ControlPlane(releases={"kueue": "v0.10.6"})` installs the CRDs of those upstream releases,
    `ControlPlane(crds=[...])` exactly those CRDs, `ControlPlane()` the default releases (as
    FakeCluster). `nodes=[NodePool(count=2, cpu="16", memory="64Gi", gpus=4)]` chooses the fake
    nodes (none without KWOK). `binaries=` is a folder with the programs (see `_assets`).
    After the first installation of a set of CRDs, later starts with the same programs restore
    etcd's keys from the cache instead of creating the CRDs again, as a restarted API server
    finds them (`_state`; `reuse_state=False` always installs them).

    `operators=["kuberay", "kueue", "jobset", "trainer", "appwrapper", "training-operator"]`
    (any of them) starts those real operators after the CRDs, at the release `releases` names
    for their family, else at the newest release built; their family's CRDs are those of
    that release. `start()` returns once every operator is ready.

    `kubelet=True` starts one real node instead of KWOK's (see `_node`): containerd and runc,
    the kubelet, kube-proxy and CoreDNS, where pods run for real (`make real-node` builds
    what it needs). The API server reaches the node (logs, exec, port-forward, its proxy to
    pods and Services) through the node's tunnel, and KubeRay asks the real Ray dashboards.
    """

    def __init__(
        self,
        releases: Mapping[str, str] | None = None,
        *,
        crds: Iterable[Mapping[str, Any]] | None = None,
        nodes: Sequence[NodePool] = _DEFAULT_NODES,
        binaries: str | os.PathLike[str] | None = None,
        namespaces: Iterable[str] = INITIAL_NAMESPACES,
        pod_run_time: float = 1.0,
        start_timeout: float = 180.0,
        reuse_state: bool = True,
        operators: Sequence[str] = (),
        kubelet: bool = False,
    ) -> None:
        if crds is not None and releases is not None:
            raise ValueError("pass either crds=[...] or releases={...}, not both")
        if crds is not None and operators:
            raise ValueError("operators=[...] installs its releases' CRDs: pass releases={...}")
        self._operator_versions = (
            _operator_runner.versions_for(operators, releases) if operators else {}
        )
        for family, version in self._operator_versions.items():
            find_build(family, version)  # refuse an operator that is not built, before starting
        if self._operator_versions:
            releases = {**(releases or _default_releases()), **self._operator_versions}
        self._crds = list(crds) if crds is not None else release_crds(releases)
        self._releases = dict(releases) if releases is not None else None
        if kubelet and nodes is not _DEFAULT_NODES:
            raise ValueError(
                "kubelet=True runs one real node; nodes=[...] chooses KWOK's fake nodes: "
                "pass one or the other"
            )
        self._nodes = [] if kubelet else list(nodes)
        # Refuse, before starting anything, a node that is not built or cannot run here.
        self._node_assets: NodeAssets | None = find_node_assets() if kubelet else None
        #: The real node, while it runs (kubelet=True).
        self.node: RealNode | None = None
        self._binaries = binaries
        self._namespaces = list(namespaces)
        self._pod_run_time = pod_run_time
        self._start_timeout = start_timeout
        self._reuse_state = reuse_state
        #: Whether this start restored the etcd keys saved after an earlier installation of
        #: the same CRDs by the same programs (see `_state`), instead of creating them.
        self.restored_state = False
        self._dir: Path | None = None
        self._components: list[Component] = []
        self._rest: Rest | None = None
        self._tokens = {
            ADMIN: secrets.token_hex(24),
            RESTRICTED: secrets.token_hex(24),
            DIRECT: secrets.token_hex(24),
        }
        self._port = 0
        self._clients: set[str] = {ADMIN, RESTRICTED}
        self._audit_offset = 0
        self._audit_lock = threading.Lock()
        self._assets: Assets | None = None
        self._ca: Authority | None = None
        self._operators = _operator_runner.Running()
        self.startup_seconds: float | None = None
        #: Every process started, by component name, kept after `stop()` (for checks that
        #: nothing survived).
        self.started_pids: dict[str, int] = {}
        #: The temporary directory of the last start, kept after `stop()` removed it.
        self.last_directory: Path | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> ControlPlane:
        if self._dir is not None:
            return self
        started = time.monotonic()
        self._assets = find_assets(self._binaries)
        self._dir = Path(tempfile.mkdtemp(prefix="flarekit-controlplane-"))
        self.last_directory = self._dir
        self.started_pids = {}
        self._operators = _operator_runner.Running()
        try:
            self._start_all(self._assets, self._dir)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started
        return self

    def _deadline(self) -> float:
        return time.monotonic() + self._start_timeout

    def _start_all(self, assets: Assets, root: Path) -> None:
        issued = self._issue_certificates(root)
        ca, sa = issued.ca, issued.service_accounts
        etcd_port = self._start_etcd(assets, root)
        etcd_url = f"http://127.0.0.1:{etcd_port}"
        state = self._state_file(assets)
        self.restored_state = state is not None and self._restore(etcd_url, state)
        self._start_apiserver(
            assets, root, ca, sa, issued.serving, issued.kubelet_client, etcd_port
        )
        self._rest = Rest(Endpoint("127.0.0.1", self._port, ca.ca_cert, self._tokens[DIRECT]))
        write_kubeconfig(self.kubeconfig_path, self.url, ca.ca_cert, self._tokens[ADMIN])
        self._wait(self._apiserver_ready, "kube-apiserver to become ready")
        self._start_controllers(assets, root, ca, sa)
        self._install_crds(create=not self.restored_state)
        if state is not None and not self.restored_state:
            # A cache: a start that cannot write it is no worse than one without it.
            with contextlib.suppress(OSError, ValueError):
                _state.save(etcd_url, state)
        self._make_nodes()
        self._make_namespaces()
        if self._assets is not None and self._assets.kwok is not None and self._nodes:
            self._wait(self._nodes_ready, "the fake nodes to become Ready")
        cluster_proxy = self._start_node(root) if self._node_assets is not None else None
        if self._operator_versions:
            _operator_runner.start(
                self, self._operator_versions, root, self._operators, cluster_proxy
            )
        self._audit_offset = self._audit_size()

    def _start_node(self, root: Path) -> int:
        """Start the real node; returns the host port of its HTTP proxy into the cluster."""
        assert self._node_assets is not None
        trainer = self._operator_versions.get("trainer")
        install = find_build("trainer", trainer).install if trainer else None
        self.node = RealNode(PlaneHost(self), root / "node", self._node_assets)
        proxy = free_port()
        self.node.start(image_names(install), http_proxy_port=proxy)
        return proxy

    def stop(self) -> None:
        """Stop every process (last started first) and remove the temporary directory."""
        errors: list[BaseException] = []
        self._operators.stop()
        if self.node is not None:
            try:
                self.node.stop()
            except BaseException as exc:  # keep stopping the others
                errors.append(exc)
            self.node = None
        errors += self._stop_components()
        self._rest = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        if errors:
            raise errors[0]

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def operators(self) -> dict[str, str]:
        """The operators this control plane runs: family -> release."""
        return dict(self._operator_versions)

    @property
    def releases(self) -> dict[str, str] | None:
        """The releases whose CRDs are installed (None: given as crds=[...])."""
        return dict(self._releases) if self._releases is not None else None

    @property
    def pod_run_time(self) -> float:
        return self._pod_run_time

    @property
    def start_timeout(self) -> float:
        return self._start_timeout

    def ray_jobs(self, namespace: str, cluster: str) -> list[JSON]:
        """The Ray jobs the simulated dashboard of RayCluster `namespace/cluster` knows."""
        if self._node_assets is not None:
            raise NotSupportedByRealServer(
                "Ray runs on the real node: ask its dashboard (flarekit's Cluster."
                "dashboard_client(), through the API server)"
            )
        dashboards = self._operators.dashboards
        if dashboards is None:
            raise NotSupportedByRealServer("no KubeRay operator runs: there is no dashboard")
        return dashboards.jobs(namespace, cluster)

    @property
    def directory(self) -> Path:
        """The temporary directory: certificates, kubeconfigs, component logs, etcd data."""
        return self._started()

    @property
    def kubeconfig_path(self) -> Path:
        return self._started() / "kubeconfig"

    def api_client(self, token: str | None = None) -> Any:
        """A `kubernetes.client.ApiClient` configured from the kubeconfig (or another token)."""
        from kubernetes import client, config

        configuration = client.Configuration()
        config.load_kube_config(
            config_file=str(self.kubeconfig_path), client_configuration=configuration
        )
        if token is not None:
            configuration.api_key = {"authorization": f"Bearer {token}"}
            configuration.refresh_api_key_hook = None
        return client.ApiClient(configuration)

    def inject(self, *args: Any, **kwargs: Any) -> Any:
        raise NotSupportedByRealServer(
            "a real API server cannot be told to fail requests: fault injection is FakeCluster's"
        )

    delay = inject


def _default_releases() -> dict[str, str]:
    return flarekit_models.default_releases()


__all__ = ["ControlPlane", "NodePool", "NotSupportedByRealServer"]
