"""`ClusterBackend`: what FakeCluster and ControlPlane both offer, so that one test (and the
walkthrough) runs on either.

Both serve the Kubernetes API over HTTPS on 127.0.0.1 and write a kubeconfig for it; both let a
test read and drive objects directly, around any client (`get`, `create`, `patch`,
`set_status`, `delete`), act as a kubelet would for pods nobody runs (`add_pod`, `start_pod`,
`finish_pod`, `append_log`), and read the requests the server received. What only an emulator
can do (fault injection, deny rules, writing a real container's log) is FakeCluster's own; on
ControlPlane those verbs raise `NotSupportedByRealServer`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

from flarekit_testing.apiserver import RecordedRequest, ResourceType, Rule

JSON = dict[str, Any]

__all__ = ["ClusterBackend"]


@runtime_checkable
class ClusterBackend(Protocol):
    """A running Kubernetes API server for tests: FakeCluster or ControlPlane."""

    # -- how to reach it ------------------------------------------------------------------------

    @property
    def url(self) -> str: ...

    @property
    def token(self) -> str:
        """The admin's bearer token (the one in the kubeconfig)."""
        ...

    @property
    def kubeconfig_path(self) -> Path: ...

    @property
    def ca_path(self) -> Path: ...

    def api_client(self, token: str | None = None) -> Any:
        """A `kubernetes.client.ApiClient` from the kubeconfig (or with another token)."""
        ...

    def add_user(self, name: str, allow: list[Rule] | None = None) -> str:
        """A user's bearer token; `allow` limits what it may do."""
        ...

    # -- reading and driving objects directly -------------------------------------------------

    def resource(self, name: str) -> ResourceType: ...

    def objects(
        self, resource: str, namespace: str | None = None, version: str | None = None
    ) -> list[JSON]: ...

    def get(self, resource: str, name: str, namespace: str | None = None) -> JSON | None: ...

    def create(self, obj: Mapping[str, Any], *, dry_run: bool = False) -> JSON: ...

    def patch(
        self,
        resource: str,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        subresource: str = "",
        content_type: str = ...,
    ) -> JSON: ...

    def set_status(
        self, resource: str, name: str, status: Mapping[str, Any], namespace: str | None = None
    ) -> JSON: ...

    def delete(self, resource: str, name: str, namespace: str | None = None) -> JSON: ...

    # -- pods nobody runs ----------------------------------------------------------------------

    def add_pod(
        self,
        namespace: str,
        name: str,
        *,
        labels: Mapping[str, str] | None = None,
        containers: Iterable[str | Mapping[str, Any]] = ...,
        phase: str = "Pending",
        annotations: Mapping[str, str] | None = None,
        owner: Mapping[str, Any] | None = None,
        spec: Mapping[str, Any] | None = None,
    ) -> JSON: ...

    def start_pod(self, namespace: str, name: str) -> JSON: ...

    def finish_pod(
        self, namespace: str, name: str, phase: str = "Succeeded", exit_code: int | None = None
    ) -> JSON: ...

    def append_log(
        self, namespace: str, pod: str, text: str, container: str | None = None
    ) -> int: ...

    # -- the request log -----------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]: ...

    def request_count(
        self,
        method: str | None = None,
        path: str | None = None,
        status: int | None = None,
        where: Callable[[RecordedRequest], bool] | None = None,
    ) -> int: ...

    def clear_requests(self) -> None: ...

    # -- lifetime ------------------------------------------------------------------------------

    def stop(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
