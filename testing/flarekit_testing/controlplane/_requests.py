"""The plane's request log: the clients' requests, read from kube-apiserver's audit log
(the components' and the direct access's left out), as FakeCluster records them."""

from __future__ import annotations

import json
import time
import urllib.parse
import uuid
from collections.abc import Callable
from pathlib import Path

import yaml

from flarekit_testing.apiserver import RecordedRequest
from flarekit_testing.controlplane._base import PlaneBase

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


def audit_flags(root: Path) -> list[str]:
    """kube-apiserver's flags that make it log every request (metadata only) under `root`."""
    policy = root / "audit-policy.yaml"
    policy.write_text(yaml.safe_dump(_AUDIT_POLICY))
    return [
        f"--audit-policy-file={policy}",
        f"--audit-log-path={root / 'audit.log'}",
        "--audit-log-mode=blocking",
    ]


class RequestLog(PlaneBase):
    """The requests the clients sent, from the audit log."""

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
