"""The programs of a ControlPlane: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler and KWOK (or, with a real node, the flags that lead to it), each started as a
local process that stops with the plane, and the checks that say when each is up."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import socket
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from flarekit_testing.apiserver import ApiError
from flarekit_testing.controlplane import _kwok
from flarekit_testing.controlplane._assets import Assets
from flarekit_testing.controlplane._certificates import Certificates
from flarekit_testing.controlplane._node import RealNode, egress_selector_configuration
from flarekit_testing.controlplane._pki import Authority, KeyPair
from flarekit_testing.controlplane._ports import free_port
from flarekit_testing.controlplane._process import Component, ComponentFailed
from flarekit_testing.controlplane._requests import audit_flags
from flarekit_testing.controlplane._users import write_token_file

SERVICE_RANGE = "10.96.0.0/16"
POD_RANGE = "10.244.0.0/16"

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


def _apiserver_environment() -> dict[str, str]:
    """Go's garbage collector at half its default frequency, unless GOGC is set.

    Measured on the default releases' CRDs: a third of kube-apiserver's start-up CPU went to
    collecting garbage while it decodes and converts the large schemas; GOGC=200 cut the
    installing start from about 31 to 19 CPU-seconds and the restoring one from 8 to 4, for
    a peak of 1.6 GiB instead of 0.9 while installing (0.7 GiB restoring), which a test
    machine can spare for the minutes a control plane lives.
    """
    return {} if "GOGC" in os.environ else {"GOGC": "200"}


class Processes(Certificates):
    """Starting, finding and checking the plane's processes."""

    def start_component(
        self, name: str, argv: list[str], env: Mapping[str, str] | None = None
    ) -> Component:
        """Start one more program that stops with the control plane (its log is
        `component_log(name)`)."""
        return self._component(name, argv, env)

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
        tokens = write_token_file(root, self._tokens)
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
                    *audit_flags(root),
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

    @property
    def pids(self) -> dict[str, int]:
        """The process id of every running component, by name."""
        return {c.name: c.pid for c in self._components if c.pid is not None and c.running()}

    def component_log(self, name: str, lines: int = 50) -> str:
        """The last lines a component (e.g. `kube-apiserver`) wrote."""
        for component in self._components:
            if component.name == name:
                return component.tail(lines)
        names = ", ".join(c.name for c in self._components)
        raise ValueError(f"no component {name!r}: running are {names or 'none'}")

    # -- waiting ------------------------------------------------------------------------------

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

    def _controller_names(self) -> tuple[str, ...]:
        """With a real node also the Endpoints controller: the API server's proxy to a
        Service (how the Ray dashboards are reached from outside) reads Endpoints."""
        if self._node_assets is None:
            return _CONTROLLER_MANAGER_CONTROLLERS
        return (*_CONTROLLER_MANAGER_CONTROLLERS, "endpoints-controller")

    def _stop_components(self) -> list[BaseException]:
        """Stop every process, last started first; the errors of those that would not stop."""
        errors: list[BaseException] = []
        while self._components:
            component = self._components.pop()
            try:
                component.stop()
            except BaseException as exc:  # keep stopping the others
                errors.append(exc)
        return errors


def _http_ok(url: str) -> bool:

    try:
        with urllib.request.urlopen(url, timeout=0.5) as response:
            return bool(response.status == 200)
    except OSError:
        return False
