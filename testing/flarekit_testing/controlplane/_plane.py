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
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import json
import os
import secrets
import shutil
import socket
import tempfile
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from flarekit_testing.apiserver import (
    INITIAL_NAMESPACES,
    ApiError,
    RecordedRequest,
    ResourceType,
    Rule,
    release_crds,
    write_kubeconfig,
)
from flarekit_testing.apiserver import pods as _pods
from flarekit_testing.controlplane import _kwok, _operator_runner, _state
from flarekit_testing.controlplane._assets import Assets, find_assets
from flarekit_testing.controlplane._node import (
    NodeAssets,
    PlaneHost,
    RealNode,
    egress_selector_configuration,
    find_node_assets,
    image_names,
)
from flarekit_testing.controlplane._operators import find_build
from flarekit_testing.controlplane._pki import Authority, KeyPair, service_account_keys
from flarekit_testing.controlplane._ports import free_port
from flarekit_testing.controlplane._process import Component, ComponentFailed
from flarekit_testing.controlplane._rest import MERGE_PATCH, Endpoint, Rest, collection_path

JSON = dict[str, Any]
NodePool = _kwok.NodePool
_DEFAULT_NODES = (NodePool(),)

ADMIN = "flarekit-admin"
RESTRICTED = "flarekit-restricted"
DIRECT = "flarekit-direct"
USERS_NAMESPACE = "flarekit-users"
SERVICE_RANGE = "10.96.0.0/16"
POD_RANGE = "10.244.0.0/16"
# The API server's own controllers and every component we start: their requests are not the
# clients' requests, so the request log leaves them out.
_CONTROLLERS = ("kube-controller-manager", "kube-scheduler", "kwok")
_CONTROLLERS_NAMESPACE = "controller-managers"

_CONTROLLER_MANAGER_CONTROLLERS = (
    "namespace-controller",
    "node-lifecycle-controller",
    "garbage-collector-controller",
    "job-controller",
    "cronjob-controller",
    "ttl-after-finished-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "root-ca-certificate-publisher-controller",
    "clusterrole-aggregation-controller",
    "replicaset-controller",
    "deployment-controller",
    "statefulset-controller",
    "endpointslice-controller",
    "pod-garbage-collector-controller",
    # Binds PersistentVolumeClaims to the PersistentVolumes a test provides: the scheduler
    # places no pod whose claim is unbound.
    "persistentvolume-binder-controller",
)

_AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [{"level": "Metadata"}],
}

_METHOD = {
    "get": "GET",
    "list": "GET",
    "watch": "GET",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETE",
}


class NotSupportedByRealServer(RuntimeError):
    """FakeCluster can do this; a real API server cannot (the message says what to do)."""


def _apiserver_environment() -> dict[str, str]:
    """Go's garbage collector at half its default frequency, unless GOGC is set.

    Measured on the default releases' CRDs: a third of kube-apiserver's start-up CPU went to
    collecting garbage while it decodes and converts the large schemas; GOGC=200 cut the
    installing start from about 31 to 19 CPU-seconds and the restoring one from 8 to 4, for
    a peak of 1.6 GiB instead of 0.9 while installing (0.7 GiB restoring), which a test
    machine can spare for the minutes a control plane lives.
    """
    return {} if "GOGC" in os.environ else {"GOGC": "200"}


class ControlPlane:
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
        pki = root / "pki"
        pki.mkdir()
        ca = self._ca = Authority(pki)
        sa = service_account_keys(pki)
        serving = ca.serving(
            "apiserver",
            ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"),
            ("127.0.0.1", "10.96.0.1"),
        )
        kubelet_client = ca.client(
            "apiserver-kubelet-client", "kube-apiserver-kubelet-client", ("system:masters",)
        )
        etcd_port = self._start_etcd(assets, root)
        etcd_url = f"http://127.0.0.1:{etcd_port}"
        state = self._state_file(assets)
        self.restored_state = state is not None and self._restore(etcd_url, state)
        self._start_apiserver(assets, root, ca, sa, serving, kubelet_client, etcd_port)
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
        for name in self._namespaces:
            with contextlib.suppress(ApiError):
                self._rest.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
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

    def _node_apiserver_flags(self, root: Path) -> list[str]:
        """With a real node: the API server reaches the cluster (kubelet, pods, Services)
        through the node's tunnel, and the `kubernetes` Service's endpoint is where the node
        leads to the API server (the lease reconciler keeps it, as on any cluster)."""
        if self._node_assets is None:
            return ["--endpoint-reconciler-type=none"]
        egress = root / "egress-selector.yaml"
        egress.write_text(egress_selector_configuration(root / "node" / "tunnel.sock"))
        return [
            f"--egress-selector-config-file={egress}",
            f"--advertise-address={RealNode.ADDRESS}",
            "--endpoint-reconciler-type=lease",
        ]

    def _state_file(self, assets: Assets) -> Path | None:
        if not self._reuse_state or not self._crds:
            return None
        return _state.state_path((assets.kube_apiserver, assets.etcd), self._crds)

    @staticmethod
    def _restore(etcd_url: str, state: Path) -> bool:
        try:
            return _state.load(etcd_url, state) is not None
        except BaseException:
            # A copy etcd refuses is removed, so the next start installs the CRDs again.
            with contextlib.suppress(OSError):
                state.unlink()
            raise

    def start_component(
        self, name: str, argv: list[str], env: Mapping[str, str] | None = None
    ) -> Component:
        """Start one more program that stops with the control plane (its log is
        `component_log(name)`)."""
        return self._component(name, argv, env)

    def service_account_token(self, namespace: str, account: str) -> str:
        """A token of ServiceAccount `namespace/account`, requested as the kubelet requests
        a pod's projected token (valid for a day). Requests made with it are not the
        clients': they stay out of the request log."""
        token = self.rest.request(
            "POST",
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": 86400},
            },
        )["status"]["token"]
        return str(token)

    def _component(
        self, name: str, argv: list[str], env: Mapping[str, str] | None = None
    ) -> Component:
        assert self._dir is not None
        component = Component(name, argv, self._dir / f"{name}.log", env)
        self._components.append(component)
        component.start()
        assert component.pid is not None
        self.started_pids[name] = component.pid
        return component

    def _start_etcd(self, assets: Assets, root: Path) -> int:
        for _attempt in range(3):
            client, peer = free_port(), free_port()
            data = root / "etcd"
            shutil.rmtree(data, ignore_errors=True)
            etcd = self._component(
                "etcd",
                [
                    str(assets.etcd),
                    "--name=flarekit",
                    f"--data-dir={data}",
                    f"--listen-client-urls=http://127.0.0.1:{client}",
                    f"--advertise-client-urls=http://127.0.0.1:{client}",
                    f"--listen-peer-urls=http://127.0.0.1:{peer}",
                    f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                    f"--initial-cluster=flarekit=http://127.0.0.1:{peer}",
                    "--unsafe-no-fsync=true",
                    "--log-level=warn",
                ],
            )
            try:
                health = functools.partial(_http_ok, f"http://127.0.0.1:{client}/health")
                self._wait(health, "etcd to answer", component=etcd)
                return client
            except ComponentFailed as exc:
                if "address already in use" not in str(exc):
                    raise
                etcd.stop()
                self._components.remove(etcd)
        raise ComponentFailed("etcd could not bind a free port in three attempts")

    def _start_apiserver(
        self,
        assets: Assets,
        root: Path,
        ca: Authority,
        sa: KeyPair,
        serving: KeyPair,
        kubelet_client: KeyPair,
        etcd_port: int,
    ) -> None:
        tokens = root / "tokens.csv"
        tokens.write_text(
            f'{self._tokens[ADMIN]},{ADMIN},{ADMIN},"system:masters"\n'
            f"{self._tokens[RESTRICTED]},{RESTRICTED},{RESTRICTED}\n"
            f'{self._tokens[DIRECT]},{DIRECT},{DIRECT},"system:masters"\n'
        )
        tokens.chmod(0o600)
        policy = root / "audit-policy.yaml"
        policy.write_text(yaml.safe_dump(_AUDIT_POLICY))
        for _attempt in range(3):
            self._port = free_port()
            apiserver = self._component(
                "kube-apiserver",
                [
                    str(assets.kube_apiserver),
                    f"--etcd-servers=http://127.0.0.1:{etcd_port}",
                    "--bind-address=127.0.0.1",
                    f"--secure-port={self._port}",
                    f"--tls-cert-file={serving.cert}",
                    f"--tls-private-key-file={serving.key}",
                    f"--client-ca-file={ca.ca_cert}",
                    f"--token-auth-file={tokens}",
                    "--authorization-mode=Node,RBAC",
                    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                    f"--service-account-key-file={sa.cert}",
                    f"--service-account-signing-key-file={sa.key}",
                    f"--service-cluster-ip-range={SERVICE_RANGE}",
                    "--allow-privileged=true",
                    f"--kubelet-client-certificate={kubelet_client.cert}",
                    f"--kubelet-client-key={kubelet_client.key}",
                    "--kubelet-preferred-address-types=InternalIP",
                    f"--audit-policy-file={policy}",
                    f"--audit-log-path={root / 'audit.log'}",
                    "--audit-log-mode=blocking",
                    *self._node_apiserver_flags(root),
                    *self._admission_flags(assets),
                    f"--cert-dir={root / 'pki'}",
                    "--v=1",
                ],
                env=_apiserver_environment(),
            )
            try:
                self._wait(
                    self._apiserver_listening, "kube-apiserver to listen", component=apiserver
                )
                return
            except ComponentFailed as exc:
                if "address already in use" not in str(exc):
                    raise
                apiserver.stop()
                self._components.remove(apiserver)
        raise ComponentFailed("kube-apiserver could not bind a free port in three attempts")

    @staticmethod
    def _admission_flags(assets: Assets) -> list[str]:
        """Without a controller-manager nothing creates the `default` service account, and
        the ServiceAccount admission plugin would refuse every pod: switched off then, as
        envtest does."""
        if assets.kube_controller_manager is None:
            return ["--disable-admission-plugins=ServiceAccount"]
        return []

    def _component_kubeconfig(self, ca: Authority, name: str, pair: KeyPair) -> Path:
        assert self._dir is not None
        path = self._dir / f"{name}.kubeconfig"
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "local",
                    "cluster": {"server": self.url, "certificate-authority": str(ca.ca_cert)},
                }
            ],
            "users": [
                {
                    "name": name,
                    "user": {"client-certificate": str(pair.cert), "client-key": str(pair.key)},
                }
            ],
            "contexts": [{"name": "local", "context": {"cluster": "local", "user": name}}],
            "current-context": "local",
        }
        path.write_text(yaml.safe_dump(config))
        path.chmod(0o600)
        return path

    def _start_controllers(self, assets: Assets, root: Path, ca: Authority, sa: KeyPair) -> None:
        if assets.kube_controller_manager is not None:
            pair = ca.client("controller-manager", "system:kube-controller-manager")
            kubeconfig = self._component_kubeconfig(ca, "controller-manager", pair)
            self._component(
                "kube-controller-manager",
                [
                    str(assets.kube_controller_manager),
                    f"--kubeconfig={kubeconfig}",
                    f"--authentication-kubeconfig={kubeconfig}",
                    f"--authorization-kubeconfig={kubeconfig}",
                    "--bind-address=127.0.0.1",
                    "--secure-port=0",
                    "--leader-elect=false",
                    "--use-service-account-credentials=true",
                    f"--service-account-private-key-file={sa.key}",
                    f"--root-ca-file={ca.ca_cert}",
                    f"--cluster-signing-cert-file={ca.ca_cert}",
                    f"--cluster-signing-key-file={ca.ca_key}",
                    f"--service-cluster-ip-range={SERVICE_RANGE}",
                    f"--controllers={','.join(self._controller_names())}",
                    "--v=1",
                ],
            )
        if assets.kube_scheduler is not None:
            pair = ca.client("scheduler", "system:kube-scheduler")
            kubeconfig = self._component_kubeconfig(ca, "scheduler", pair)
            self._component(
                "kube-scheduler",
                [
                    str(assets.kube_scheduler),
                    f"--kubeconfig={kubeconfig}",
                    f"--authentication-kubeconfig={kubeconfig}",
                    f"--authorization-kubeconfig={kubeconfig}",
                    "--bind-address=127.0.0.1",
                    "--secure-port=0",
                    "--leader-elect=false",
                    "--v=1",
                ],
            )
        if assets.kwok is not None and self._node_assets is None:
            pair = ca.client("kwok", "kwok-controller", ("system:masters",))
            kubeconfig = self._component_kubeconfig(ca, "kwok", pair)
            config = root / "kwok.yaml"
            log_file = _kwok.write_simulated_log(root / "simulated-pod.log")
            config.write_text(_kwok.configuration(self._pod_run_time, log_file))
            serving = ca.serving("kwok-serving", ("localhost",), ("127.0.0.1",))
            # The nodes report this port as their kubelet's, so `pods/log` reaches KWOK.
            kubelet_port = free_port()
            self._component(
                "kwok",
                [
                    str(assets.kwok),
                    f"--kubeconfig={kubeconfig}",
                    f"--config={config}",
                    "--manage-all-nodes=true",
                    "--node-ip=127.0.0.1",
                    f"--cidr={POD_RANGE}",
                    "--node-lease-duration-seconds=40",
                    f"--server-address=127.0.0.1:{kubelet_port}",
                    f"--node-port={kubelet_port}",
                    f"--tls-cert-file={serving.cert}",
                    f"--tls-private-key-file={serving.key}",
                ],
                env={"HOME": str(root)},
            )

    def _controller_names(self) -> tuple[str, ...]:
        """With a real node also the Endpoints controller: the API server's proxy to a
        Service (how the Ray dashboards are reached from outside) reads Endpoints."""
        if self._node_assets is None:
            return _CONTROLLER_MANAGER_CONTROLLERS
        return (*_CONTROLLER_MANAGER_CONTROLLERS, "endpoints-controller")

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
        while self._components:
            component = self._components.pop()
            try:
                component.stop()
            except BaseException as exc:  # keep stopping the others
                errors.append(exc)
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
    def pids(self) -> dict[str, int]:
        """The process id of every running component, by name."""
        return {c.name: c.pid for c in self._components if c.pid is not None and c.running()}

    @property
    def directory(self) -> Path:
        """The temporary directory: certificates, kubeconfigs, component logs, etcd data."""
        return self._started()

    def component_log(self, name: str, lines: int = 50) -> str:
        """The last lines a component (e.g. `kube-apiserver`) wrote."""
        for component in self._components:
            if component.name == name:
                return component.tail(lines)
        names = ", ".join(c.name for c in self._components)
        raise ValueError(f"no component {name!r}: running are {names or 'none'}")

    # -- waiting ------------------------------------------------------------------------------

    def _wait(
        self,
        ready: Callable[[], bool],
        what: str,
        *,
        component: Component | None = None,
        timeout: float | None = None,
    ) -> None:
        deadline = time.monotonic() + (timeout or self._start_timeout)
        delay = 0.02
        while True:
            for running in self._components:
                running.check()
            if ready():
                return
            if time.monotonic() > deadline:
                logs = "\n".join(
                    f"--- {c.name} ---\n{c.tail(15)}"
                    for c in ([component] if component else self._components)
                )
                raise ComponentFailed(f"timed out waiting for {what}\n{logs}")
            time.sleep(delay)
            delay = min(delay * 1.5, 0.25)

    def _apiserver_listening(self) -> bool:
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", self._port), timeout=0.5),
        ):
            return True
        return False

    def _apiserver_ready(self) -> bool:
        assert self._rest is not None
        try:
            answer = str(self._rest.request("GET", "/readyz", expect_json=False))
        except (ApiError, OSError):
            return False
        return answer.strip() == "ok"

    def _nodes_ready(self) -> bool:
        assert self._rest is not None
        nodes = self._rest.request("GET", "/api/v1/nodes")["items"]
        wanted = sum(pool.count for pool in self._nodes)
        ready = [
            n
            for n in nodes
            if any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in (n.get("status") or {}).get("conditions") or []
            )
        ]
        return len(ready) >= wanted

    # -- set-up -------------------------------------------------------------------------------

    def _install_crds(self, create: bool = True) -> None:
        """Create the CRDs (unless restored from a saved state) and wait until they are
        served."""
        assert self._rest is not None
        path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        rest = self._rest
        # The server spends most of a CRD's creation decoding and checking its schema; a few
        # at once keep both cores busy. The largest first, so none is left for last alone.
        ordered = sorted(self._crds, key=lambda c: -len(json.dumps(c))) if create else []
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            for done in [pool.submit(rest.request, "POST", path, dict(crd)) for crd in ordered]:
                done.result()
        wanted = {
            (str(c["spec"]["group"]), str(v["name"]), str(c["spec"]["names"]["plural"]))
            for c in self._crds
            for v in c["spec"]["versions"]
            if v.get("served", True)
        }

        def established() -> bool:
            # A CRD's resource appears in discovery once it is Established and served. One
            # aggregated discovery document is small; listing the CRDs themselves would send
            # megabytes of schemas at every poll.
            assert self._rest is not None
            return wanted <= self._rest.served_resources()

        self._wait(established, "the CRDs to become Established")
        self._rest.forget_types()

    def _make_nodes(self) -> None:
        assert self._rest is not None and self._assets is not None
        if self._assets.kwok is None:
            return
        for pool in self._nodes:
            for node in pool.manifests():
                self._rest.request("POST", "/api/v1/nodes", node)

    # -- connection details -------------------------------------------------------------------

    def _started(self) -> Path:
        if self._dir is None or self._rest is None:
            raise RuntimeError("ControlPlane is not running: call start() or use `with`")
        return self._dir

    @property
    def port(self) -> int:
        self._started()
        return self._port

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self._port}"

    @property
    def token(self) -> str:
        """The bearer token of the admin user written into the kubeconfig."""
        return self._tokens[ADMIN]

    @property
    def restricted_token(self) -> str:
        """The bearer token of a user with no rights beyond those of every authenticated
        user (discovery, self reviews): anything else it asks is answered 403."""
        return self._tokens[RESTRICTED]

    @property
    def kubeconfig_path(self) -> Path:
        return self._started() / "kubeconfig"

    @property
    def ca_path(self) -> Path:
        return self._started() / "pki" / "ca.crt"

    @property
    def assets(self) -> Assets:
        if self._assets is None:
            raise RuntimeError("ControlPlane is not running: call start() or use `with`")
        return self._assets

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

    @property
    def rest(self) -> Rest:
        self._started()
        assert self._rest is not None
        return self._rest

    # -- users --------------------------------------------------------------------------------

    def add_user(self, name: str, allow: list[Rule] | None = None) -> str:
        """A new user and its bearer token. Without `allow` it may do anything (bound to
        cluster-admin); with `allow` exactly what the rules grant, as RBAC rules.

        The user is a ServiceAccount in the `flarekit-users` namespace (a real API server
        reads static tokens only at start), so the server names it
        `system:serviceaccount:flarekit-users:<name>`."""
        rest = self.rest
        with contextlib.suppress(ApiError):
            rest.request("POST", "/api/v1/namespaces", {"metadata": {"name": USERS_NAMESPACE}})
        rest.request(
            "POST",
            f"/api/v1/namespaces/{USERS_NAMESPACE}/serviceaccounts",
            {"metadata": {"name": name}},
        )
        subject = {"kind": "ServiceAccount", "name": name, "namespace": USERS_NAMESPACE}
        role_name = f"flarekit-user-{name}"
        if allow is None:
            role_ref = {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "cluster-admin",
            }
            self._bind(role_name, role_ref, subject, None)
        else:
            self._grant(role_name, subject, allow)
        token = rest.request(
            "POST",
            f"/api/v1/namespaces/{USERS_NAMESPACE}/serviceaccounts/{name}/token",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": 86400},
            },
        )["status"]["token"]
        self._clients.add(f"system:serviceaccount:{USERS_NAMESPACE}:{name}")
        return str(token)

    def certificate_kubeconfig(self, user: str, groups: Sequence[str] = ()) -> Path:
        """A kubeconfig that authenticates with a new client certificate for `user` in
        `groups` (`("system:masters",)` makes it an administrator)."""
        root = self._started()
        assert self._ca is not None
        stem = f"user-{uuid.uuid4().hex[:8]}"
        pair = self._ca.client(stem, user, tuple(groups))
        self._clients.add(user)
        path = self._component_kubeconfig(self._ca, stem, pair)
        assert path.parent == root
        return path

    def _grant(self, role_name: str, subject: JSON, allow: list[Rule]) -> None:
        rbac = "/apis/rbac.authorization.k8s.io/v1"
        cluster_rules: list[JSON] = []
        by_namespace: dict[str, list[JSON]] = {}
        for rule in allow:
            if rule.users is not None:
                raise NotSupportedByRealServer(
                    "RBAC rules name no users: give add_user(...) rules without `user`"
                )
            entry: JSON = {
                "verbs": sorted(rule.verbs) if rule.verbs is not None else ["*"],
                "apiGroups": sorted(rule.groups) if rule.groups is not None else ["*"],
                "resources": sorted(rule.resources) if rule.resources is not None else ["*"],
            }
            if rule.names is not None:
                entry["resourceNames"] = sorted(rule.names)
            if rule.namespaces is None:
                cluster_rules.append(entry)
            else:
                for namespace in rule.namespaces:
                    by_namespace.setdefault(namespace, []).append(entry)
        if cluster_rules:
            self.rest.request(
                "POST",
                f"{rbac}/clusterroles",
                {"metadata": {"name": role_name}, "rules": cluster_rules},
            )
            self._bind(
                role_name,
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role_name},
                subject,
                None,
            )
        for namespace, rules in by_namespace.items():
            self.rest.request(
                "POST",
                f"{rbac}/namespaces/{namespace}/roles",
                {"metadata": {"name": role_name}, "rules": rules},
            )
            self._bind(
                role_name,
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role_name},
                subject,
                namespace,
            )

    def _bind(self, name: str, role_ref: JSON, subject: JSON, namespace: str | None) -> None:
        rbac = "/apis/rbac.authorization.k8s.io/v1"
        kind = "rolebindings" if namespace else "clusterrolebindings"
        prefix = f"{rbac}/namespaces/{namespace}" if namespace else rbac
        self.rest.request(
            "POST",
            f"{prefix}/{kind}",
            {"metadata": {"name": name}, "roleRef": role_ref, "subjects": [subject]},
        )

    def deny(self, *args: Any, **kwargs: Any) -> Rule:
        raise NotSupportedByRealServer(
            "RBAC only grants: there are no deny rules on a real API server. Use "
            "add_user(name, allow=[...]) or restricted_token for a user that gets 403"
        )

    def inject(self, *args: Any, **kwargs: Any) -> Any:
        raise NotSupportedByRealServer(
            "a real API server cannot be told to fail requests: fault injection is FakeCluster's"
        )

    delay = inject

    # -- resource types and direct access -----------------------------------------------------

    def resource(self, name: str) -> ResourceType:
        """A served resource type by plural, `plural.group`, kind, singular or short name."""
        found = self.rest.resource(name)
        if found is None:
            self.rest.forget_types()
            found = self.rest.resource(name)
        if found is None:
            raise ValueError(f"unknown resource {name!r}: the API server does not serve it")
        return found

    def _path(
        self, rt: ResourceType, namespace: str | None, name: str = "", version: str | None = None
    ) -> str:
        ns = (namespace or "default") if rt.namespaced else None
        path = collection_path(rt, version or rt.storage_version, ns)
        return f"{path}/{urllib.parse.quote(name)}" if name else path

    def objects(
        self, resource: str, namespace: str | None = None, version: str | None = None
    ) -> list[JSON]:
        """Current objects of a resource (one namespace, or all when None)."""
        rt = self.resource(resource)
        path = collection_path(
            rt, version or rt.storage_version, namespace if rt.namespaced else None
        )
        listed = self.rest.request("GET", path)
        api_version = rt.api_version(version or rt.storage_version)
        return [{"apiVersion": api_version, "kind": rt.kind, **o} for o in listed["items"]]

    def get(self, resource: str, name: str, namespace: str | None = None) -> JSON | None:
        rt = self.resource(resource)
        try:
            found: JSON = self.rest.request("GET", self._path(rt, namespace, name))
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise
        return found

    def create(self, obj: Mapping[str, Any], *, dry_run: bool = False) -> JSON:
        """Create an object as a POST does (admission, validation, defaulting)."""
        api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        group, _, version = api_version.rpartition("/")
        rt = self.resource(f"{kind}") if not group else self._kind(group, kind)
        meta = obj.get("metadata") or {}
        path = self._path(rt, meta.get("namespace"), version=version)
        query = {"dryRun": "All"} if dry_run else None
        created: JSON = self.rest.request("POST", path, dict(obj), query=query)
        return created

    def _kind(self, group: str, kind: str) -> ResourceType:
        rt = self.resource(f"{kind}")
        if rt.group == group:
            return rt
        for candidate in (self.rest.resource(f"{rt.plural}.{group}"),):
            if candidate is not None:
                return candidate
        raise ValueError(f"{kind} in {group} is not served")

    def patch(
        self,
        resource: str,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        subresource: str = "",
        content_type: str = MERGE_PATCH,
    ) -> JSON:
        """Patch an object (merge patch by default) as a PATCH request does."""
        rt = self.resource(resource)
        path = self._path(rt, namespace, name)
        if subresource:
            path += f"/{subresource}"
        patched: JSON = self.rest.request("PATCH", path, patch, content_type=content_type)
        return patched

    def set_status(
        self, resource: str, name: str, status: Mapping[str, Any], namespace: str | None = None
    ) -> JSON:
        """Merge `status` into an object's status, through /status when the resource has it."""
        rt = self.resource(resource)
        version = rt.version(rt.storage_version)
        sub = "status" if version is not None and version.status_subresource else ""
        return self.patch(resource, name, {"status": dict(status)}, namespace, subresource=sub)

    def delete(self, resource: str, name: str, namespace: str | None = None) -> JSON:
        """Delete an object as a DELETE does (finalizers respected)."""
        rt = self.resource(resource)
        deleted: JSON = self.rest.request("DELETE", self._path(rt, namespace, name))
        return deleted

    # -- pods ---------------------------------------------------------------------------------

    def add_pod(
        self,
        namespace: str,
        name: str,
        *,
        labels: Mapping[str, str] | None = None,
        containers: Iterable[str | Mapping[str, Any]] = ("main",),
        phase: str = "Pending",
        annotations: Mapping[str, str] | None = None,
        owner: Mapping[str, Any] | None = None,
        spec: Mapping[str, Any] | None = None,
    ) -> JSON:
        """Create a pod; the scheduler places it and KWOK starts it. `phase="Running"` waits
        until it runs; `Succeeded`/`Failed` then ends it (see `finish_pod`)."""
        if phase not in _pods.PHASES[:4]:
            raise ValueError(f"phase must be one of {', '.join(_pods.PHASES[:4])}; got {phase!r}")
        self._wait_service_account(namespace)
        self.create(
            _pods.manifest(
                namespace, name, containers, labels, annotations=annotations, owner=owner, spec=spec
            )
        )
        if phase == "Pending":
            return self._pod(namespace, name)
        self.start_pod(namespace, name)
        if phase in _pods.FINISHED:
            return self.finish_pod(namespace, name, phase)
        return self._pod(namespace, name)

    def _wait_service_account(self, namespace: str) -> None:
        """A pod needs its namespace's `default` service account, which the controller-manager
        creates a moment after the namespace: wait for it, so that a namespace made just
        before works as on FakeCluster (a real client would retry)."""
        if self.assets.kube_controller_manager is None:
            return
        self._wait(
            lambda: self.get("serviceaccounts", "default", namespace) is not None,
            f"the default service account of namespace {namespace}",
            timeout=30,
        )

    def _pod(self, namespace: str, name: str) -> JSON:
        pod = self.get("pods", name, namespace)
        if pod is None:
            present = ", ".join(o["metadata"]["name"] for o in self.objects("pods", namespace))
            raise ValueError(
                f"no pod {name!r} in namespace {namespace!r}; pods there: {present or 'none'}"
            )
        return pod

    def start_pod(self, namespace: str, name: str, timeout: float = 30.0) -> JSON:
        """Wait until the scheduler has placed the pod and its fake kubelet reports it
        Running and Ready."""
        if self.assets.kwok is None and self._node_assets is None:
            raise NotSupportedByRealServer(
                "no kwok binary: nothing runs pods; build the control plane with "
                "`make control-plane` or write the pod's status with set_status"
            )

        def running() -> bool:
            return _pods.phase(self._pod(namespace, name)) in ("Running", *_pods.FINISHED)

        self._wait(running, f"pod {namespace}/{name} to run", timeout=timeout)
        return self._pod(namespace, name)

    def finish_pod(
        self, namespace: str, name: str, phase: str = "Succeeded", exit_code: int | None = None
    ) -> JSON:
        """End the pod: `Succeeded` (exit code 0) or `Failed` (1 unless given), written to its
        status as a kubelet would report it."""
        if self._node_assets is not None:
            raise NotSupportedByRealServer(
                "the real node's kubelet reports its pods' status: run a container that exits "
                "with the code you want"
            )
        pod = self._pod(namespace, name)
        return self.set_status(
            "pods", name, _pods.finished_status(pod, phase, exit_code), namespace
        )

    def append_log(self, namespace: str, pod: str, text: str, container: str | None = None) -> int:
        raise NotSupportedByRealServer(
            "a real API server reads container logs from the node's kubelet; here KWOK plays "
            "it and every container's log is the note that the pod is simulated (no process "
            "runs in it to write more)"
        )

    # -- request log (from the audit log) -----------------------------------------------------

    def _audit_size(self) -> int:
        path = self._started() / "audit.log"
        return path.stat().st_size if path.exists() else 0

    def _sync_audit(self) -> None:
        """Make sure every request answered so far is in the audit log: send a marker request
        and wait until the server has logged it."""
        marker = uuid.uuid4().hex
        self.rest.request(
            "GET", "/version", query={"flarekit-audit-marker": marker}, expect_json=True
        )
        path = self._started() / "audit.log"
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if marker in path.read_text(errors="replace")[self._audit_offset :]:
                return
            time.sleep(0.01)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Requests of the clients (the admin, restricted and added users) since start or the
        last `clear_requests()`, from the API server's audit log, oldest first. Requests of
        the control plane's own components and of the direct access are left out."""
        with self._audit_lock:
            self._sync_audit()
            path = self._started() / "audit.log"
            with open(path, "rb") as f:
                f.seek(self._audit_offset)
                lines = f.read().decode(errors="replace").splitlines()
        seen: set[str] = set()
        out: list[RecordedRequest] = []
        for line in lines:
            event = json.loads(line)
            user = event.get("user", {}).get("username", "")
            if user not in self._clients or event.get("auditID") in seen:
                continue
            seen.add(event.get("auditID", ""))
            uri = urllib.parse.urlsplit(event.get("requestURI", ""))
            out.append(
                RecordedRequest(
                    method=_METHOD.get(event.get("verb", ""), event.get("verb", "").upper()),
                    path=uri.path,
                    query=urllib.parse.parse_qs(uri.query),
                    status=int((event.get("responseStatus") or {}).get("code") or 0),
                    user=user,
                )
            )
        return out

    def request_count(
        self,
        method: str | None = None,
        path: str | None = None,
        status: int | None = None,
        where: Callable[[RecordedRequest], bool] | None = None,
    ) -> int:
        """How many requests matched: method, path prefix, status and/or a predicate."""
        return sum(
            1
            for r in self.requests
            if (method is None or r.method == method.upper())
            and (path is None or r.path.startswith(path))
            and (status is None or r.status == status)
            and (where is None or where(r))
        )

    def clear_requests(self) -> None:
        with self._audit_lock:
            self._sync_audit()
            self._audit_offset = self._audit_size()


def _default_releases() -> dict[str, str]:
    from flarekit_models._crds import default_releases

    return default_releases()


def _http_ok(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=0.5) as response:
            return bool(response.status == 200)
    except OSError:
        return False


__all__ = ["ControlPlane", "NodePool", "NotSupportedByRealServer"]
