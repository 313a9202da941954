"""Starting the chosen operators on a running ControlPlane, and knowing when they are ready.

The plans (`_operators.make_plan`) say what to create and what to run; this module does it,
in the order an installation would: every operator's namespaces, RBAC, configuration and
webhook configurations (and its CRDs' conversion webhooks) first, then the operators, each in
its sandbox, then the wait until each one's readiness probe answers 200 and its webhook
server completes a TLS handshake with the certificate we gave it, then the objects of the
operators' own kinds from their installs (Trainer's runtimes), which their webhooks check.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from flarekit_testing.apiserver import ApiError
from flarekit_testing.controlplane import _operators as operators
from flarekit_testing.controlplane._ports import free_port
from flarekit_testing.controlplane._process import Component, ComponentFailed
from flarekit_testing.controlplane._raydash import RayDashboards
from flarekit_testing.controlplane._rest import Rest
from flarekit_testing.controlplane._sandbox import Relay, Spec, launcher_argv, unshare_command

JSON = dict[str, Any]
_CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


class ControlPlane(Protocol):
    """What starting operators needs of the plane (`ControlPlane` offers it)."""

    @property
    def rest(self) -> Rest: ...
    @property
    def port(self) -> int: ...
    @property
    def ca_path(self) -> Path: ...
    @property
    def directory(self) -> Path: ...
    @property
    def pod_run_time(self) -> float: ...
    @property
    def start_timeout(self) -> float: ...
    def create(self, obj: Mapping[str, Any], *, dry_run: bool = False) -> JSON: ...
    def get(self, resource: str, name: str, namespace: str | None = None) -> JSON | None: ...
    def service_account_token(self, namespace: str, account: str) -> str: ...
    def start_component(
        self, name: str, argv: list[str], env: Mapping[str, str] | None = None
    ) -> Component: ...
    def component_log(self, name: str, lines: int = 50) -> str: ...
    def _wait(
        self,
        ready: Callable[[], bool],
        what: str,
        *,
        component: Component | None = None,
        timeout: float | None = None,
    ) -> None: ...


@dataclass
class Running:
    """The operators a ControlPlane started (and the simulated Ray dashboards, if any)."""

    plans: dict[str, operators.Plan] = field(default_factory=dict)
    dashboards: RayDashboards | None = None

    def stop(self) -> None:
        if self.dashboards is not None:
            self.dashboards.stop()
            self.dashboards = None


def start(
    plane: ControlPlane,
    versions: Mapping[str, str],
    root: Path,
    running: Running,
    cluster_proxy: int | None = None,
) -> None:
    """Start the operators `versions` names (family -> release) on `plane`; fills `running`
    as it goes, so that a failure halfway can be cleaned up by stopping the plane.

    `cluster_proxy`: the host port of an HTTP proxy into a real node's network, where
    operators that call into the cluster over HTTP (KubeRay asks the Ray dashboards) send
    those requests; without one, they go to the simulated Ray dashboards."""
    unshare_command()  # fail first, with the reason, where no sandbox can be made
    families = operators.order(versions)
    plans = running.plans
    for family in families:
        build = operators.find_build(family, versions[family])
        folder = root / f"{family}-operator"
        folder.mkdir()
        plans[family] = operators.make_plan(build, families, folder, free_port)
    if cluster_proxy is None and any(plan.family.cluster_http for plan in plans.values()):
        running.dashboards = RayDashboards(
            lambda path: plane.rest.request("GET", path), plane.pod_run_time
        ).start()
    for plan in plans.values():
        _install(plane, plan)
    for plan in plans.values():
        proxy = cluster_proxy
        if proxy is None and running.dashboards is not None:
            proxy = running.dashboards.port
        _launch(plane, plan, proxy)
    plane._wait(
        lambda: all(_ready(plan) for plan in plans.values()),
        "the operators to become ready (readiness probe and webhook server)",
        timeout=max(plane.start_timeout, 120.0),
    )
    for plan in plans.values():
        _check_certificate_kept(plane, plan)
        for obj in plan.after:
            plane.create(obj)


def _install(plane: ControlPlane, plan: operators.Plan) -> None:
    namespaces = {plan.workload.namespace} | {
        str(o["metadata"]["name"]) for o in plan.before if o.get("kind") == "Namespace"
    }
    for name in sorted(namespaces):
        with contextlib.suppress(ApiError):  # several operators may share one
            plane.rest.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    for obj in plan.before:
        if obj.get("kind") != "Namespace":
            plane.create(obj)
    for name, conversion in plan.conversions.items():
        try:
            plane.rest.request(
                "PATCH",
                f"{_CRDS}/{name}",
                {"spec": {"conversion": conversion}},
                content_type="application/merge-patch+json",
            )
        except ApiError as exc:
            if exc.code != 404:  # a CRD of a release set without it: nothing to convert
                raise


#: Where a kubelet puts a pod's ServiceAccount token, CA and namespace.
SERVICE_ACCOUNT_FOLDER = "/var/run/secrets/kubernetes.io/serviceaccount"


def _service_account_files(plane: ControlPlane, plan: operators.Plan) -> dict[str, str]:
    """The pod's ServiceAccount volume: a token of the Deployment's ServiceAccount, the
    cluster's CA and the namespace (with `KUBERNETES_SERVICE_HOST`/`_PORT`, what client
    libraries' in-cluster configuration reads)."""
    load = plan.workload
    folder = plan.directory / "serviceaccount"
    folder.mkdir()
    (folder / "token").write_text(plane.service_account_token(load.namespace, load.service_account))
    (folder / "ca.crt").write_bytes(plane.ca_path.read_bytes())
    (folder / "namespace").write_text(load.namespace)
    for file in folder.iterdir():
        file.chmod(0o600)
    return {f"{SERVICE_ACCOUNT_FOLDER}/{f.name}": str(f) for f in folder.iterdir()}


def _launch(plane: ControlPlane, plan: operators.Plan, cluster_proxy: int | None) -> None:
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(plan.directory),
        "KUBERNETES_SERVICE_HOST": "127.0.0.1",
        "KUBERNETES_SERVICE_PORT": str(plane.port),
        **plan.env,
    }
    outbound = [Relay(plane.port, plane.port)]
    if plan.family.cluster_http and cluster_proxy is not None:
        env["HTTP_PROXY"] = env["http_proxy"] = f"http://127.0.0.1:{cluster_proxy}"
        outbound.append(Relay(cluster_proxy, cluster_proxy))
    spec = Spec(
        argv=plan.argv,
        env=env,
        # The program stays reachable when the cache it was built into is under /tmp.
        keep=[str(plane.directory), str(Path(plan.argv[0]).resolve().parent)],
        outbound=outbound,
        inbound=plan.inbound,
        files={**plan.files, **_service_account_files(plane, plan)},
    )
    spec_path = plan.directory / "sandbox.json"
    spec.write(spec_path)
    plane.start_component(plan.name, launcher_argv(spec_path))


def _ready(plan: operators.Plan) -> bool:
    if plan.readiness is not None:
        port, path = plan.readiness
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=1) as answer:
                if answer.status != 200:
                    return False
        except OSError:
            return False
    context = ssl.create_default_context(cadata=plan.webhook_ca.decode("ascii"))
    for port in plan.webhook_ports:
        try:
            with (
                socket.create_connection(("127.0.0.1", port), timeout=1) as raw,
                context.wrap_socket(raw, server_hostname="127.0.0.1"),
            ):
                pass
        except (OSError, ssl.SSLError):
            return False
    return True


def _check_certificate_kept(plane: ControlPlane, plan: operators.Plan) -> None:
    """An operator that manages its own certificate must have kept the one it was given
    (else the API server could not call its webhooks): say so plainly if it did not."""
    secret = plan.cert_secret
    if secret is None:
        return
    meta = secret["metadata"]
    current = plane.get("secrets", meta["name"], meta["namespace"]) or {}
    if (current.get("data") or {}).get("ca.crt") != secret["data"]["ca.crt"]:
        raise ComponentFailed(
            f"{plan.family.title} {plan.build.version} replaced the webhook certificate it was "
            f"given in Secret {meta['namespace']}/{meta['name']}: the API server cannot call "
            f"its webhooks\n{plane.component_log(plan.name, 30)}"
        )


def versions_for(families: Sequence[str], releases: Mapping[str, str] | None) -> dict[str, str]:
    """Each operator's release: the one `releases` names, else the newest built."""
    out: dict[str, str] = {}
    for family in operators.order(families):
        wanted = (releases or {}).get(family)
        if wanted is None:
            built = operators.built_versions(family)
            if not built:
                raise operators.OperatorNotBuilt(
                    f"no {operators.FAMILIES[family].title} operator is built: run "
                    "`make control-plane` (it builds controlplane/operators/*)"
                )
            wanted = built[-1]
        out[family] = wanted
    return out
