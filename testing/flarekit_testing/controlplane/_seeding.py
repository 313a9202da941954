"""What a started plane is given before it is handed over: the CRDs (created, or restored
from the etcd keys saved after an earlier installation), KWOK's nodes and the namespaces."""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
from pathlib import Path

from flarekit_testing.apiserver import ApiError
from flarekit_testing.controlplane import _state
from flarekit_testing.controlplane._assets import Assets
from flarekit_testing.controlplane._base import PlaneBase


class Seeding(PlaneBase):
    """Installing the CRDs, the nodes and the namespaces."""

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

    def _make_namespaces(self) -> None:
        assert self._rest is not None
        for name in self._namespaces:
            with contextlib.suppress(ApiError):
                self._rest.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})

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
