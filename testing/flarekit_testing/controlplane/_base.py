"""What every part of `ControlPlane` shares: its state, how to reach the running API server,
and how to wait for something to happen.

`ControlPlane` is put together from one class per concern (`_processes`, `_certificates`,
`_users`, `_seeding`, `_objects`, `_pods`, `_requests`), each a subclass of `PlaneBase`, so that
each concern reads in one module while the test backend stays one object with FakeCluster's
shape. The attributes are set by `ControlPlane.__init__`; they are declared here so that every
part is type-checked against the same state.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flarekit_testing.controlplane import _kwok, _operator_runner
from flarekit_testing.controlplane._assets import Assets
from flarekit_testing.controlplane._node import NodeAssets, RealNode
from flarekit_testing.controlplane._pki import Authority
from flarekit_testing.controlplane._process import Component, ComponentFailed
from flarekit_testing.controlplane._rest import Rest

JSON = dict[str, Any]


class NotSupportedByRealServer(RuntimeError):
    """FakeCluster can do this; a real API server cannot (the message says what to do)."""


class PlaneBase:
    """The state of a ControlPlane and the helpers every part of it uses."""

    _crds: list[Any]
    _releases: dict[str, str] | None
    _operator_versions: dict[str, str]
    _nodes: list[_kwok.NodePool]
    _binaries: Any
    _namespaces: list[str]
    _pod_run_time: float
    _start_timeout: float
    _reuse_state: bool
    restored_state: bool
    _dir: Path | None
    _components: list[Component]
    _rest: Rest | None
    _tokens: dict[str, str]
    _port: int
    _clients: set[str]
    _audit_offset: int
    _audit_lock: threading.Lock
    _assets: Assets | None
    _ca: Authority | None
    _operators: _operator_runner.Running
    _node_assets: NodeAssets | None
    node: RealNode | None
    startup_seconds: float | None
    started_pids: dict[str, int]
    last_directory: Path | None

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
    def ca_path(self) -> Path:
        return self._started() / "pki" / "ca.crt"

    @property
    def assets(self) -> Assets:
        if self._assets is None:
            raise RuntimeError("ControlPlane is not running: call start() or use `with`")
        return self._assets

    @property
    def rest(self) -> Rest:
        self._started()
        assert self._rest is not None
        return self._rest

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
