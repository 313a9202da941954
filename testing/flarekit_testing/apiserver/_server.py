"""FakeCluster: start the emulated apiserver, and reach into it from tests.

This is the object tests hold. It owns the store, the HTTPS server thread, the certificates
and kubeconfig, the auth policy, fault rules, the request log, container logs and the
controller loop, and it offers direct access (`objects`, `get`, `create`, `patch`,
`set_status`, `delete`, and for pods `add_pod`, `start_pod`, `append_log`, `finish_pod`) that
runs the same handlers as HTTP requests, minus authentication, so seeded objects look exactly
like objects created through the API.
"""

from __future__ import annotations

import functools
import json
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import flarekit_models
from flarekit_testing.apiserver import _crd_api, _deletes, _reads, _writes
from flarekit_testing.apiserver import pods as _pods
from flarekit_testing.apiserver._auth import Policy, Rule, rule
from flarekit_testing.apiserver._controllers import Controller, ControllerLoop
from flarekit_testing.apiserver._conversion import with_conversion
from flarekit_testing.apiserver._core_kinds import CORE_KINDS
from flarekit_testing.apiserver._deletes import finalize_namespace
from flarekit_testing.apiserver._errors import ApiError
from flarekit_testing.apiserver._faults import (
    FaultRule,
    Faults,
    Predicate,
    RecordedRequest,
    RequestLog,
)
from flarekit_testing.apiserver._http import Backend, make_server
from flarekit_testing.apiserver._kube_controllers import (
    GarbageCollector,
    NamespaceDefaults,
    Scheduler,
)
from flarekit_testing.apiserver._logs import LogStore
from flarekit_testing.apiserver._request import Request, present
from flarekit_testing.apiserver._resources import Registry, ResourceType
from flarekit_testing.apiserver._reviews import REVIEW_KINDS
from flarekit_testing.apiserver._store import Store
from flarekit_testing.apiserver._tls import make_certificates, write_kubeconfig

JSON = dict[str, Any]

INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
DIRECT_AGENT = "flarekit-fakecluster/direct"
#: The `User-Agent` of `FakeCluster.api_client()`: a test's own reads, not the code under test.
API_CLIENT_AGENT = "flarekit-fakecluster/api-client"
_RUNNING: weakref.WeakSet[FakeCluster] = weakref.WeakSet()


def release_crds(releases: Mapping[str, str] | None) -> list[JSON]:
    """CRDs of the given upstream releases (all default releases when None).

    Read once per set of releases and shared by every FakeCluster that serves them: nothing
    changes a served CRD, and compiled schemas are cached per schema object, so later
    FakeClusters start without reading or compiling them again."""
    chosen = dict(flarekit_models.default_releases() if releases is None else releases)
    return list(_release_crds(tuple(sorted(chosen.items())), flarekit_models.crds_for))


@functools.lru_cache(maxsize=16)
def _release_crds(
    releases: tuple[tuple[str, str], ...], crds_for: Callable[[dict[str, str]], Any]
) -> tuple[JSON, ...]:
    return tuple(dict(c) for c in crds_for(dict(releases)))


class FakeCluster:
    """An in-process Kubernetes API server for custom resources, reachable over HTTPS.

    `FakeCluster(crds=[...])` serves exactly those CRDs; `FakeCluster(releases={"kueue":
    "v0.10.6"})` the CRDs of those upstream releases; `FakeCluster()` the default releases.
    Namespaces and pods (with their `log` subresource) are always served, and the CRDs
    themselves, read-only, at ``apiextensions.k8s.io/v1`` (subject to `deny` like the rest).
    Use it as a context manager, or call `start()` / `stop()`. `controllers=[...]` registers
    simulated controllers (see `add_controller`); none run by default.
    """

    def __init__(
        self,
        crds: Iterable[Mapping[str, Any]] | None = None,
        releases: Mapping[str, str] | None = None,
        *,
        history: int = 1000,
        bookmark_interval: float = 60.0,
        tick_interval: float = 1.0,
        namespaces: Iterable[str] = INITIAL_NAMESPACES,
        controllers: Iterable[Controller[FakeCluster]] = (),
        node_labels: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        if crds is not None and releases is not None:
            raise ValueError("pass either crds=[...] or releases={...}, not both")
        if bookmark_interval <= 0:
            raise ValueError(f"bookmark_interval must be positive, got {bookmark_interval}")
        served = list(crds) if crds is not None else release_crds(releases)
        self.registry = Registry(
            served, builtins=(*CORE_KINDS, _pods.PODS, *REVIEW_KINDS), adapt=with_conversion
        )
        self.store = Store(history)
        self.policy = Policy()
        self.faults = Faults()
        self._log = RequestLog()
        self.logs = LogStore()
        self.store.on_commit.append(self.logs.on_commit)
        self._backend = Backend(
            self.registry,
            self.store,
            self.policy,
            self.faults,
            self._log,
            bookmark_interval,
            self.logs,
            crds=_crd_api.present_crds(served),
        )
        self._controllers: ControllerLoop[FakeCluster] = ControllerLoop(self, tick_interval)
        self.store.on_commit.append(self._controllers.offer)
        self._namespace_defaults = NamespaceDefaults(self.store)
        self.store.on_commit.append(self._namespace_defaults.on_commit)
        self.store.on_commit.append(GarbageCollector(self.store, finalize_namespace).on_commit)
        self._scheduler = Scheduler(self.store, _pods.NODES, node_labels)
        self.store.on_commit.append(self._scheduler.on_commit)
        self._dir: Path | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None
        for name in namespaces:
            self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        for controller in controllers:
            self.add_controller(controller)

    # -- lifecycle ----------------------------------------------------------------------------

    @classmethod
    def running(cls) -> list[FakeCluster]:
        """The FakeClusters serving in this process now (for suites that check the requests
        every server received, such as "every request came through flarekit's `Client`")."""
        return list(_RUNNING)

    def start(self) -> FakeCluster:
        if self._server is not None:
            return self
        _RUNNING.add(self)
        self._dir = Path(tempfile.mkdtemp(prefix="flarekit-fakecluster-"))
        tls = make_certificates(self._dir)
        self._server = make_server(self._backend, tls.server_context())
        host, port = self._server.server_address[:2]
        self._backend.address = f"{host}:{port}"
        write_kubeconfig(self.kubeconfig_path, self.url, tls.ca_cert, self.policy.admin_token)
        with self.store.lock:
            self._namespace_defaults.started(tls.ca_cert.read_text())
        self.store.start_watch_window()
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="flarekit-fakecluster",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        _RUNNING.discard(self)
        self._controllers.stop()
        self.store.close_watches()
        self.logs.close()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self) -> FakeCluster:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- connection details -------------------------------------------------------------------

    def _started(self) -> Path:
        if self._dir is None or self._server is None:
            raise RuntimeError("FakeCluster is not running: call start() or use `with`")
        return self._dir

    @property
    def port(self) -> int:
        self._started()
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        """The bearer token of the admin user written into the kubeconfig."""
        return self.policy.admin_token

    @property
    def kubeconfig_path(self) -> Path:
        return self._started() / "kubeconfig"

    @property
    def ca_path(self) -> Path:
        return self._started() / "ca.crt"

    def api_client(self, token: str | None = None) -> Any:
        """A `kubernetes.client.ApiClient` configured from the kubeconfig (or another token).

        Its requests carry the `User-Agent` `API_CLIENT_AGENT`, so that a test's own reads
        through it are told apart from requests of the code under test."""
        from kubernetes import client, config

        configuration = client.Configuration()
        config.load_kube_config(
            config_file=str(self.kubeconfig_path), client_configuration=configuration
        )
        if token is not None:
            configuration.api_key = {"authorization": f"Bearer {token}"}
            configuration.refresh_api_key_hook = None  # it would restore the kubeconfig token
        api = client.ApiClient(configuration)
        api.user_agent = API_CLIENT_AGENT
        return api

    # -- auth -----------------------------------------------------------------------------------

    def add_user(self, name: str, allow: list[Rule] | None = None) -> str:
        """Register a user and return its bearer token; `allow` limits what it may do."""
        return self.policy.add_token(name, allow)

    def deny(
        self,
        verb: str | list[str] | None = None,
        resource: str | list[str] | None = None,
        namespace: str | list[str] | None = None,
        *,
        group: str | list[str] | None = None,
        name: str | list[str] | None = None,
        user: str | list[str] | None = None,
    ) -> Rule:
        """Forbid matching requests (None matches anything) with 403 Forbidden."""
        return self.policy.deny(rule(verb, resource, group, namespace, name, user))

    def clear_denies(self) -> None:
        self.policy.clear()

    # -- faults ---------------------------------------------------------------------------------

    def inject(
        self,
        match: str | Predicate,
        status: int = 500,
        times: int | None = 1,
        retry_after: float | None = None,
        method: str | None = None,
    ) -> FaultRule:
        """Fail matching requests with `status` (429/500/502/503/504), `times` times."""
        return self.faults.add(FaultRule(match, status, times, retry_after, method))

    def delay(
        self,
        match: str | Predicate,
        seconds: float,
        times: int | None = None,
        method: str | None = None,
    ) -> FaultRule:
        """Hold matching requests for `seconds` before handling them."""
        if seconds <= 0:
            raise ValueError(f"seconds must be positive, got {seconds}")
        return self.faults.add(FaultRule(match, 200, times, None, method, delay=seconds))

    def clear_faults(self) -> None:
        self.faults.clear()

    def drop_watches(self) -> int:
        """Abruptly close every open watch connection; returns how many there were."""
        return self.store.close_watches()

    @property
    def open_watches(self) -> int:
        return self.store.open_watches

    def drop_log_streams(self) -> int:
        """Abruptly close every open `follow` log stream; returns how many there were."""
        return self.logs.drop()

    @property
    def open_log_streams(self) -> int:
        return self.logs.open_streams

    # -- request log ----------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        return self._log.snapshot()

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
            for r in self._log.snapshot()
            if (method is None or r.method == method.upper())
            and (path is None or r.path.startswith(path))
            and (status is None or r.status == status)
            and (where is None or where(r))
        )

    def clear_requests(self) -> None:
        self._log.clear()

    # -- direct access --------------------------------------------------------------------------

    def resource(self, name: str) -> ResourceType:
        """A served resource type by plural, `plural.group`, kind, singular or short name."""
        found = self.registry.by_name(name)
        if found is None:
            served = ", ".join(sorted(f"{t.plural}.{t.group}".rstrip(".") for t in self.registry))
            raise ValueError(f"unknown resource {name!r}: served resources are {served}")
        return found

    def _request(
        self,
        method: str,
        rt: ResourceType,
        namespace: str | None,
        name: str = "",
        subresource: str = "",
        body: Any = None,
        content_type: str = "",
        version: str | None = None,
        query: dict[str, list[str]] | None = None,
    ) -> Request:
        chosen = rt.version(version or rt.storage_version)
        if chosen is None:
            served = ", ".join(v.name for v in rt.served_versions)
            raise ValueError(f"version {version!r} of {rt.plural} is not served: use {served}")
        if rt.namespaced and namespace is None:
            namespace = "default"
        return Request(
            method,
            rt,
            chosen,
            (namespace or "") if rt.namespaced else "",
            name,
            subresource,
            query or {},
            b"" if body is None else json.dumps(body).encode(),
            content_type,
            DIRECT_AGENT,
            self.policy.admin_user,
        )

    def objects(
        self, resource: str, namespace: str | None = None, version: str | None = None
    ) -> list[JSON]:
        """Current objects of a resource (one namespace, or all when None)."""
        rt = self.resource(resource)
        chosen = version or rt.storage_version
        items = self.store.items(*rt.bucket, namespace if rt.namespaced else None)
        return [present(o, rt, chosen) for o in items]

    def get(self, resource: str, name: str, namespace: str | None = None) -> JSON | None:
        rt = self.resource(resource)
        ns = (namespace or "default") if rt.namespaced else ""
        obj = self.store.get((*rt.bucket, ns, name))
        return present(obj, rt, rt.storage_version) if obj is not None else None

    def create(
        self, obj: Mapping[str, Any], *, dry_run: bool = False, field_manager: str = ""
    ) -> JSON:
        """Create an object as a POST would (validation, defaulting, events); no auth.
        `field_manager`: who owns its fields (a simulated operator names the real one)."""
        api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        group, _, version = api_version.rpartition("/")
        rt = self.registry.by_kind(group, kind)
        if rt is None:
            raise ValueError(
                f"{kind or '<no kind>'} in {api_version or '<no apiVersion>'} is not served"
            )
        meta = obj.get("metadata") or {}
        query = {"dryRun": ["All"]} if dry_run else {}
        if field_manager:
            query["fieldManager"] = [field_manager]
        req = self._request(
            "POST", rt, meta.get("namespace"), body=dict(obj), version=version, query=query
        )
        return _writes.create(self.store, req).body

    def patch(
        self,
        resource: str,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        subresource: str = "",
        content_type: str = _writes.MERGE_PATCH,
    ) -> JSON:
        """Patch an object (merge patch by default) as a PATCH request would; no auth."""
        rt = self.resource(resource)
        req = self._request("PATCH", rt, namespace, name, subresource, patch, content_type)
        return _writes.patch(self.store, req).body

    def set_status(
        self, resource: str, name: str, status: Mapping[str, Any], namespace: str | None = None
    ) -> JSON:
        """Merge `status` into an object's status, through /status when the CRD has it."""
        rt = self.resource(resource)
        version = rt.version(rt.storage_version)
        sub = "status" if version is not None and version.status_subresource else ""
        return self.patch(resource, name, {"status": dict(status)}, namespace, subresource=sub)

    def delete(self, resource: str, name: str, namespace: str | None = None) -> JSON:
        """Delete an object as a DELETE would (finalizers respected); no auth."""
        rt = self.resource(resource)
        return _deletes.delete(self.store, self._request("DELETE", rt, namespace, name)).body

    def list_response(self, resource: str, namespace: str | None = None, **query: str) -> JSON:
        """A list response as GET on the collection would return it (query as keywords)."""
        rt = self.resource(resource)
        req = self._request("GET", rt, namespace, query={k: [v] for k, v in query.items()})
        if namespace is None:
            req.namespace = ""
        return _reads.list_objects(self.store, req).body

    @property
    def resource_version(self) -> int:
        return self.store.resource_version

    def compact(self) -> None:
        """Forget the event history: older resourceVersions then answer 410 Expired."""
        self.store.compact()

    # -- pods and their logs --------------------------------------------------------------------

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
        """Create a pod (containers by name, or full container mappings) in `phase`: Pending
        as created, Running, or Succeeded/Failed with its containers terminated."""
        if phase not in _pods.PHASES[:4]:
            raise ValueError(f"phase must be one of {', '.join(_pods.PHASES[:4])}; got {phase!r}")
        self.create(
            _pods.manifest(
                namespace, name, containers, labels, annotations=annotations, owner=owner, spec=spec
            )
        )
        if phase == "Running":
            return self.start_pod(namespace, name)
        if phase in _pods.FINISHED:
            return self.finish_pod(namespace, name, phase)
        return self._pod(namespace, name)

    def _pod(self, namespace: str, name: str) -> JSON:
        pod = self.get("pods", name, namespace)
        if pod is None:
            present = ", ".join(o["metadata"]["name"] for o in self.objects("pods", namespace))
            raise ValueError(
                f"no pod {name!r} in namespace {namespace!r}; pods there: {present or 'none'}"
            )
        return pod

    def start_pod(self, namespace: str, name: str) -> JSON:
        """Report the pod Running, every container started and ready (as a kubelet would),
        on a simulated node it is bound to first (as the scheduler would)."""
        self.bind_pod(namespace, name)
        pod = self._pod(namespace, name)
        return self.set_status("pods", name, _pods.running_status(pod), namespace)

    def bind_pod(self, namespace: str, name: str, node: str | None = None) -> JSON:
        """Bind the pod to `node` (by default one of the simulated nodes `node-0`, `node-1`,
        stable per pod), as the scheduler's binding does; pods of the default scheduler are
        bound when they are created, this is for the others."""
        pod = self._pod(namespace, name)
        if not (pod.get("spec") or {}).get("nodeName"):
            with self.store.lock:
                self._scheduler.bind(
                    ("", "pods", namespace, name), node or self._scheduler.node_for(pod)
                )
        return self._pod(namespace, name)

    def finish_pod(
        self, namespace: str, name: str, phase: str = "Succeeded", exit_code: int | None = None
    ) -> JSON:
        """End the pod: `Succeeded` (exit code 0) or `Failed` (1 unless given); followed log
        streams of its containers then end."""
        pod = self._pod(namespace, name)
        return self.set_status(
            "pods", name, _pods.finished_status(pod, phase, exit_code), namespace
        )

    def append_log(self, namespace: str, pod: str, text: str, container: str | None = None) -> int:
        """Write `text` (one or more lines) to a container's log; returns the number of lines.
        `container` may be left out when the pod has exactly one."""
        return self.logs.append(
            (namespace, pod, self._log_container(namespace, pod, container)), text
        )

    def read_log(self, namespace: str, pod: str, container: str | None = None) -> str:
        """A container's log as written so far (no HTTP, no options)."""
        key = (namespace, pod, self._log_container(namespace, pod, container))
        return "".join(line.text + "\n" for line in self.logs.lines(key))

    def _log_container(self, namespace: str, pod: str, container: str | None) -> str:
        obj = self._pod(namespace, pod)
        names = _pods.container_names(obj) + _pods.container_names(obj, init=True)
        if container is None and len(_pods.container_names(obj)) == 1:
            return _pods.container_names(obj)[0]
        if container is None or container not in names:
            given = "no container" if container is None else f"container {container!r}"
            raise ValueError(f"{given} for pod {pod!r}: choose one of {', '.join(names) or 'none'}")
        return container

    # -- controllers ----------------------------------------------------------------------------

    def add_controller(self, controller: Controller[FakeCluster]) -> None:
        """Run a simulated controller on the controller thread (see `Controller`); the
        admission webhooks it brings (`webhooks`, see `AdmissionWebhook`) see every write
        from then on."""
        self.store.webhooks.extend(getattr(controller, "webhooks", ()))
        self._controllers.add(controller)

    @property
    def controller_errors(self) -> list[BaseException]:
        """What the simulated controllers raised so far (each also fails the test during
        which it happened, with the pytest plugin)."""
        return list(self._controllers.errors)

    def settle_controllers(self, timeout: float = 5.0) -> bool:
        """Wait until the controllers have handled every change committed so far (and no
        tick is running); whether they did within `timeout` seconds."""
        return self._controllers.settle(timeout)


__all__ = ["ApiError", "FakeCluster"]
