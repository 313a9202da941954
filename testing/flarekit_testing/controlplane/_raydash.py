"""Simulated Ray dashboards, reached the way KubeRay reaches the real ones.

KubeRay's RayJob controller follows a Ray job through the dashboard of the cluster's head: it
sends plain HTTP requests to `http://<head service>.<namespace>.svc.cluster.local:<port>`.
On the control plane no Ray runs (KWOK only plays the pods' status), and that name resolves
nowhere. So ControlPlane starts KubeRay with `HTTP_PROXY` pointing at this server, which plays
the in-cluster network for those requests: it reads the Service the name stands for, checks
that the port is one of its ports and that a Running pod backs it, and when that pod is a Ray
head and the port its dashboard port, answers as a **simulated** Ray dashboard (Ray's Jobs
REST API). Anything else answers 502 with the reason. Every answer carries the header
`X-Flarekit-Simulated: ray-dashboard`, and every job's `message` says it is simulated.

The simulated Ray jobs:

- A job submitted over HTTP (KubeRay's `HTTPMode`, or any client) is RUNNING at once and ends
  after `FLAREKIT_SIMULATED_DURATION` (seconds, from the job's `runtime_env.env_vars`; the
  control plane's pod run time by default).
- A job submitted by a submitter pod (KubeRay's default `K8sJobMode`: a Job whose pod runs
  `ray job submit ... --submission-id <id>`) exists from the moment that pod runs. It runs
  for `FLAREKIT_SIMULATED_DURATION` of its runtime environment when that is set, else as long
  as the pod runs (`ray job submit` follows the job to its end).
- A job ends SUCCEEDED, or FAILED when its submitter pod failed or its runtime environment
  sets `FLAREKIT_SIMULATED_EXIT_CODE` to a non-zero number (the entrypoint's exit code).
- `POST /api/jobs/<id>/stop` makes a running job STOPPED.
"""

from __future__ import annotations

import json
import re
import shlex
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from flarekit_testing.apiserver import ApiError
from flarekit_testing.operators import simulated_duration as duration
from flarekit_testing.operators import simulated_exit_code as exit_code

JSON = dict[str, Any]
Getter = Callable[[str], JSON]  # GET an API path as the control plane's admin
SIMULATED = " (simulated: no Ray runs on this control plane)"
_SERVICE_HOST = re.compile(r"^([a-z0-9-]+)\.([a-z0-9-]+)\.svc(\.cluster\.local)?$")
HEAD_LABEL = "ray.io/node-type"
CLUSTER_LABEL = "ray.io/cluster"
DASHBOARD_PORT = 8265


class _Refused(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _millis(stamp: str | None) -> int | None:
    if not stamp:
        return None
    from datetime import datetime

    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


@dataclass
class SimulatedJob:
    """One Ray job of one simulated dashboard."""

    submission_id: str
    entrypoint: str
    runtime_env: JSON
    metadata: dict[str, str]
    start_ms: int
    status: str = "RUNNING"
    end_ms: int | None = None
    message: str = ""
    #: For jobs submitted over HTTP: when they end on their own.
    ends_at: float | None = None
    exit_code: int = 0
    extra: JSON = field(default_factory=dict)

    def finish(self, succeeded: bool, end_ms: int, exit_code: int) -> None:
        self.status = "SUCCEEDED" if succeeded else "FAILED"
        self.end_ms = end_ms
        self.exit_code = exit_code
        self.message = (
            "Job finished successfully."
            if succeeded
            else f"Job entrypoint command failed with exit code {exit_code}."
        )

    def details(self) -> JSON:
        message = self.message or {
            "RUNNING": "Job is currently running.",
            "STOPPED": "Job was intentionally stopped.",
        }.get(self.status, "")
        return {
            "type": "SUBMISSION",
            "job_id": None,
            "submission_id": self.submission_id,
            "driver_info": None,
            "status": self.status,
            "entrypoint": self.entrypoint,
            "message": message + SIMULATED,
            "error_type": "JOB_ENTRYPOINT_COMMAND_ERROR" if self.status == "FAILED" else None,
            "start_time": self.start_ms,
            "end_time": self.end_ms,
            "metadata": self.metadata,
            "runtime_env": self.runtime_env,
            "driver_agent_http_address": None,
            "driver_node_id": None,
            "driver_exit_code": self.exit_code if self.end_ms is not None else None,
            **self.extra,
        }


def _tokens(container: JSON) -> list[str]:
    """A container's command line as tokens (KubeRay writes it as a list, or as one shell
    script in `args`)."""
    out: list[str] = []
    for part in [*(container.get("command") or []), *(container.get("args") or [])]:
        text = str(part)
        if " --submission-id " in text:
            try:
                out.extend(shlex.split(text))
                continue
            except ValueError:
                pass
        out.append(text)
    return out


def _entrypoint(tokens: list[str]) -> str:
    """What follows `ray job submit ... --` (up to the end of that shell command)."""
    if "submit" not in tokens:
        return ""
    after = tokens[tokens.index("submit") :]
    if "--" not in after:
        return ""
    words = after[after.index("--") + 1 :]
    return shlex.join(words[: words.index(";")] if ";" in words else words)


def _option(tokens: list[str], name: str) -> str | None:
    for index, token in enumerate(tokens[:-1]):
        if token == name:
            return tokens[index + 1]
    return None


class RayDashboards:
    """An HTTP proxy on 127.0.0.1 that answers for the Ray heads of the control plane."""

    def __init__(self, get: Getter, pod_run_time: float) -> None:
        self._get = get
        self._pod_run_time = pod_run_time
        self._jobs: dict[tuple[str, str], dict[str, SimulatedJob]] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> RayDashboards:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def jobs(self, namespace: str, cluster: str) -> list[JSON]:
        """The jobs the simulated dashboard of `namespace/cluster` knows (for tests)."""
        with self._lock:
            known = list(self._jobs.get((namespace, cluster), {}).values())
        return [j.details() for j in known]

    # -- the network ------------------------------------------------------------------------

    def _head(self, host: str, port: int) -> tuple[str, JSON]:
        """The namespace and Running Ray head pod behind `host:port`, or `_Refused`."""
        match = _SERVICE_HOST.match(host)
        if match is None:
            raise _Refused(502, f"{host} is not a Service of this cluster")
        name, namespace = match.group(1), match.group(2)
        try:
            service = self._get(f"/api/v1/namespaces/{namespace}/services/{name}")
        except ApiError as exc:
            raise _Refused(502, f"no Service {namespace}/{name}: {exc.code}") from None
        ports = [p for p in service["spec"].get("ports") or [] if int(p["port"]) == port]
        if not ports:
            raise _Refused(502, f"Service {namespace}/{name} has no port {port}")
        selector = service["spec"].get("selector") or {}
        query = urllib.parse.urlencode(
            {"labelSelector": ",".join(f"{k}={v}" for k, v in sorted(selector.items()))}
        )
        pods = self._get(f"/api/v1/namespaces/{namespace}/pods?{query}")["items"]
        running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
        if not selector or not running:
            raise _Refused(502, f"Service {namespace}/{name} has no running pod behind it")
        pod = running[0]
        target = ports[0].get("targetPort", port)
        is_dashboard = target in (DASHBOARD_PORT, "dashboard") or ports[0].get("name") == (
            "dashboard"
        )
        labels = pod["metadata"].get("labels") or {}
        if labels.get(HEAD_LABEL) != "head" or not is_dashboard:
            raise _Refused(
                502,
                f"nothing is simulated at {namespace}/{pod['metadata']['name']}:{target} "
                "(only Ray heads' dashboards are)",
            )
        return namespace, pod

    # -- the dashboard ----------------------------------------------------------------------

    def _from_submitter(
        self, namespace: str, cluster: str, submission_id: str
    ) -> SimulatedJob | None:
        """The job a submitter pod submitted, as its pod's life says (None if no such pod
        has run yet)."""
        pods = self._get(f"/api/v1/namespaces/{namespace}/pods")["items"]
        for pod in pods:
            for container in pod["spec"].get("containers") or []:
                tokens = _tokens(container)
                if _option(tokens, "--submission-id") != submission_id:
                    continue
                status = pod.get("status") or {}
                phase = status.get("phase")
                if phase not in ("Running", "Succeeded", "Failed"):
                    continue
                runtime_env = json.loads(_option(tokens, "--runtime-env-json") or "{}")
                metadata = json.loads(_option(tokens, "--metadata-json") or "{}")
                start_ms = _millis(status.get("startTime")) or int(time.time() * 1000)
                job = SimulatedJob(
                    submission_id, _entrypoint(tokens), runtime_env, metadata, start_ms
                )
                asked = duration(runtime_env)
                if asked is not None:
                    job.ends_at = start_ms / 1000 + asked
                    with self._lock:
                        self._jobs.setdefault((namespace, cluster), {})[submission_id] = job
                    return job
                if phase in ("Succeeded", "Failed"):
                    code = exit_code(runtime_env)
                    ended = [
                        (s.get("state") or {}).get("terminated") or {}
                        for s in status.get("containerStatuses") or []
                    ]
                    end_ms = max(
                        (_millis(t.get("finishedAt")) or 0 for t in ended),
                        default=int(time.time() * 1000),
                    )
                    if phase == "Failed" and code == 0:
                        code = next((int(t.get("exitCode") or 1) for t in ended if t), 1)
                    job.finish(phase == "Succeeded" and code == 0, end_ms, code)
                return job
        return None

    def _job(self, namespace: str, cluster: str, submission_id: str) -> SimulatedJob | None:
        with self._lock:
            known = self._jobs.get((namespace, cluster), {}).get(submission_id)
        if known is not None:
            if known.ends_at is not None and known.end_ms is None and time.time() >= known.ends_at:
                code = exit_code(known.runtime_env)
                known.finish(code == 0, int(known.ends_at * 1000), code)
            return known
        found = self._from_submitter(namespace, cluster, submission_id)
        if found is not None and found.end_ms is not None:
            with self._lock:  # a finished job stays, as on a real head, after its pod is gone
                self._jobs.setdefault((namespace, cluster), {})[submission_id] = found
        return found

    def _submit(self, namespace: str, cluster: str, body: JSON) -> JSON:
        submission_id = str(body.get("submission_id") or f"raysubmit_{int(time.time() * 1e6)}")
        runtime_env = body.get("runtime_env") or {}
        asked = duration(runtime_env)
        now = time.time()
        job = SimulatedJob(
            submission_id,
            str(body.get("entrypoint") or ""),
            runtime_env,
            dict(body.get("metadata") or {}),
            int(now * 1000),
            ends_at=now + (self._pod_run_time if asked is None else asked),
        )
        with self._lock:
            jobs = self._jobs.setdefault((namespace, cluster), {})
            if submission_id in jobs:
                raise _Refused(400, f"Job with submission_id {submission_id} already exists.")
            jobs[submission_id] = job
        return {"job_id": None, "submission_id": submission_id}

    def answer(self, method: str, url: str, body: bytes) -> tuple[int, Any]:
        """The status and JSON answer for one proxied request."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            return 502, f"only plain http://<service>.<namespace>.svc URLs are proxied: {url}"
        try:
            namespace, pod = self._head(parts.hostname, parts.port or 80)
            cluster = str((pod["metadata"].get("labels") or {}).get(CLUSTER_LABEL, ""))
            return self._route(method, parts.path, body, namespace, cluster)
        except _Refused as refused:
            return refused.status, refused.reason

    def _route(
        self, method: str, path: str, body: bytes, namespace: str, cluster: str
    ) -> tuple[int, Any]:
        segments = [s for s in path.split("/") if s]
        if segments == ["api", "version"] and method == "GET":
            return 200, {"version": "simulated", "ray_version": "simulated", "ray_commit": ""}
        if segments[:2] != ["api", "jobs"]:
            return 404, f"the simulated dashboard serves /api/jobs only, not {path}"
        if len(segments) == 2:
            if method == "POST":
                return 200, self._submit(namespace, cluster, json.loads(body or b"{}"))
            if method == "GET":
                with self._lock:
                    known = list(self._jobs.get((namespace, cluster), {}))
                jobs = [self._job(namespace, cluster, s) for s in known]
                return 200, [j.details() for j in jobs if j is not None]
            return 405, f"{method} is not allowed on {path}"
        job = self._job(namespace, cluster, segments[2])
        if job is None:
            return 404, f"Job {segments[2]} does not exist"
        rest = segments[3:]
        if rest == [] and method == "GET":
            return 200, job.details()
        if rest == ["logs"] and method == "GET":
            return 200, {"logs": f"simulated Ray job {job.submission_id}: nothing ran\n"}
        if rest == ["stop"] and method == "POST":
            stopped = job.end_ms is None
            if stopped:
                job.status, job.end_ms, job.ends_at = "STOPPED", int(time.time() * 1000), None
            return 200, {"stopped": stopped}
        if rest == [] and method == "DELETE":
            if job.end_ms is None:
                return 400, f"Job {job.submission_id} is not in a terminal state"
            with self._lock:
                self._jobs.get((namespace, cluster), {}).pop(job.submission_id, None)
            return 200, {"deleted": True}
        return 404, f"the simulated dashboard does not serve {method} {path}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        dashboards = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _reply(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                status, answer = dashboards.answer(self.command, self.path, body)
                if isinstance(answer, str):
                    data, kind = answer.encode(), "text/plain; charset=utf-8"
                else:
                    data, kind = json.dumps(answer).encode(), "application/json"
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("X-Flarekit-Simulated", "ray-dashboard")
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = do_PUT = _reply

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
