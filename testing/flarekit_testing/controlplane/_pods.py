"""Pods on the plane: created for a test, placed by the scheduler, run and ended by KWOK's
fake kubelets (or written to, as a kubelet reports)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from flarekit_testing.apiserver import pods as _pods
from flarekit_testing.controlplane._base import JSON, NotSupportedByRealServer
from flarekit_testing.controlplane._objects import DirectAccess


class Pods(DirectAccess):
    """Adding, starting and ending pods."""

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
