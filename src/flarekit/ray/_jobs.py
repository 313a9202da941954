"""`RayJobClient`: submit and manage jobs on a running Ray cluster through its Jobs REST API.

It speaks the dashboard's documented endpoints (``/api/version`` and ``/api/jobs/...``)
directly, so a notebook or CI runner can drive a Ray cluster without installing Ray, whose
wheel is large and must match the cluster's version. A local ``working_dir`` or
``py_modules`` entry is zipped and uploaded through the dashboard's package endpoint, as Ray's
SDK does (see `flarekit.ray._jobs_upload`).

Following logs polls ``GET /api/jobs/{id}/logs`` and yields what is new, rather than using
Ray's websocket tail endpoint: plain requests pass through every proxy that the other calls
pass through (OAuth proxies, ingresses without websocket upgrade), need no websocket library,
and end deterministically when the job's status is terminal. The cost is that each poll
downloads the whole log, which Ray keeps as one file per job.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel, ValidationError

from flarekit.ray._jobs_errors import (
    RayJobsApiError,
    RayJobTimeout,
    RayJobValidationError,
)
from flarekit.ray._jobs_http import DashboardTransport, Verify
from flarekit.ray._jobs_models import (
    JobDetails,
    LogsAnswer,
    RayJobState,
    RayVersion,
    SubmitAnswer,
)
from flarekit.ray._jobs_upload import MAX_PACKAGE_BYTES, CodeEntries, Package, local_packages
from flarekit.ray._jobs_validation import build_submit_request, check_submission_id

if TYPE_CHECKING:
    from pydantic import JsonValue as RayJson

    from flarekit._json import JsonValue

_MAX_POLL = 10.0

_Model = TypeVar("_Model", bound=BaseModel)


class RayJobClient:
    """A client for the Jobs API of one Ray dashboard.

    ``address`` is the dashboard URL (``http://127.0.0.1:8265`` when port-forwarded, or the
    route/ingress of a cluster, path prefix included). ``token`` is sent as
    ``Authorization: Bearer ...`` for clusters behind an OAuth proxy or with Ray token auth;
    ``headers`` adds any other headers (cookies, custom auth). ``verify`` controls TLS: True
    (system CAs), a CA bundle path, an ``ssl.SSLContext``, or False to skip verification.
    ``timeout`` bounds each request; ``retries`` and ``backoff`` govern retries of requests
    that are safe to repeat (see `flarekit.ray._jobs_http`). ``max_upload_bytes`` caps a
    zipped local ``working_dir`` or ``py_modules`` entry (100 MiB by default).

    Every method raises `RayJobsError` subclasses only: `RayJobValidationError` before sending
    anything, `RayJobNotFound` for an unknown job, `RayJobsApiError` for other error answers
    and `RayDashboardUnavailable` when the dashboard cannot be reached.
    """

    def __init__(
        self,
        address: str,
        *,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        verify: Verify = True,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_upload_bytes: int = MAX_PACKAGE_BYTES,
    ) -> None:
        self.max_upload_bytes = max_upload_bytes
        self._http = DashboardTransport(
            address,
            token=token,
            headers=headers,
            verify=verify,
            timeout=timeout,
            retries=retries,
            backoff=backoff,
        )

    @property
    def address(self) -> str:
        """The dashboard address requests go to, normalised (scheme, host, port, prefix)."""
        return str(self._http.address)

    def __repr__(self) -> str:
        auth = ", token=<redacted>" if self._http.has_token else ""
        names = f", headers={self._http.header_names}" if self._http.header_names else ""
        return f"RayJobClient({self.address!r}{auth}{names})"

    def version(self) -> RayVersion:
        """The Jobs API and Ray versions of the cluster; a cheap way to check connectivity."""
        try:
            answer = self._http.request("GET", "/api/version")
        except RayJobsApiError as exc:
            if exc.status != 404:
                raise
            raise RayJobsApiError(
                404,
                "no Jobs API at this address; is it a Ray dashboard (Ray 1.9 or newer), "
                "with the path prefix of any proxy included?",
                method=exc.method,
                path=exc.path,
                body=exc.body,
            ) from None
        return _parse(RayVersion, answer, "GET", "/api/version")

    def cluster_resources(self) -> dict[str, tuple[float, float]]:
        """What the cluster's Ray reports of its resources: name -> (in use, total), from the
        dashboard's cluster status (empty before any node has reported)."""
        answer = self._http.request("GET", "/api/cluster_status")
        data = answer.get("data") if isinstance(answer, dict) else None
        status = (data or {}).get("clusterStatus") if isinstance(data, dict) else None
        report = (status or {}).get("loadMetricsReport") if isinstance(status, dict) else None
        usage = (report or {}).get("usage") if isinstance(report, dict) else None
        out: dict[str, tuple[float, float]] = {}
        for name, pair in (usage or {}).items() if isinstance(usage, dict) else ():
            if isinstance(pair, list) and len(pair) == 2:
                out[str(name)] = (float(pair[0]), float(pair[1]))
        return out

    def submit(
        self,
        entrypoint: str,
        *,
        submission_id: str | None = None,
        runtime_env: Mapping[str, JsonValue] | None = None,
        metadata: Mapping[str, str] | None = None,
        entrypoint_num_cpus: float | None = None,
        entrypoint_num_gpus: float | None = None,
        entrypoint_memory: int | None = None,
        entrypoint_resources: Mapping[str, float] | None = None,
        entrypoint_label_selector: Mapping[str, str] | None = None,
    ) -> str:
        """Submit `entrypoint` (a shell command run on the head node) and return its submission id.

        Without `submission_id` Ray generates one (``raysubmit_...``); with one, submitting the
        same id twice fails with `RayJobsApiError`, which makes retried submissions safe.
        The ``entrypoint_*`` arguments reserve resources for the entrypoint process itself.
        A local ``runtime_env["working_dir"]`` or ``["py_modules"]`` entry is zipped (without
        ``runtime_env["excludes"]``), uploaded unless the cluster has it already, and sent as
        its ``gcs://_ray_pkg_<hash>.zip`` URI; every entry is zipped and size-checked before
        the first upload.
        """
        request = build_submit_request(
            entrypoint,
            submission_id=submission_id,
            runtime_env=runtime_env,
            metadata=metadata,
            entrypoint_num_cpus=entrypoint_num_cpus,
            entrypoint_num_gpus=entrypoint_num_gpus,
            entrypoint_memory=entrypoint_memory,
            entrypoint_resources=entrypoint_resources,
            entrypoint_label_selector=entrypoint_label_selector,
        )
        if request.runtime_env is not None:
            request.runtime_env = self._upload(request.runtime_env)
        answer = self._http.request("POST", "/api/jobs/", request.body())
        try:
            parsed = SubmitAnswer.model_validate(answer)
        except ValidationError:
            parsed = SubmitAnswer()
        found = parsed.submission_id or parsed.job_id
        if found:
            return found
        raise RayJobsApiError(
            200,
            f"submit answer has no submission_id: {answer!r:.200}",
            method="POST",
            path="/api/jobs/",
        )

    def _upload(self, runtime_env: dict[str, RayJson]) -> dict[str, RayJson]:
        """`runtime_env` with its local entries uploaded and replaced by their URIs."""
        prepared = local_packages(dict[str, object](runtime_env), self.max_upload_bytes)
        code = CodeEntries.model_validate(prepared)
        out = dict(runtime_env)
        if isinstance(code.working_dir, Package):
            out["working_dir"] = self._ensure_package(code.working_dir)
        modules = code.py_modules
        if isinstance(modules, list):
            out["py_modules"] = [
                self._ensure_package(m) if isinstance(m, Package) else str(m) for m in modules
            ]
        return out

    def _ensure_package(self, found: object) -> str:
        """Upload the package unless the cluster has it; its URI."""
        assert isinstance(found, Package)
        path = f"/api/packages/gcs/{found.name}"
        try:
            self._http.request("GET", path, expect_json=False)
        except RayJobsApiError as exc:
            if exc.status != 404:
                raise
            self._http.request("PUT", path, data=found.data, expect_json=False)
        return found.uri

    def get(self, submission_id: str) -> JobDetails:
        """Everything the dashboard reports about one job (also accepts a Ray job id)."""
        path = self._job_path(submission_id)
        return _parse(JobDetails, self._http.request("GET", path, job=submission_id), "GET", path)

    def status(self, submission_id: str) -> RayJobState:
        """The job's current status."""
        return self.get(submission_id).status

    def logs(self, submission_id: str) -> str:
        """The job's driver output so far (stdout and stderr of the entrypoint)."""
        path = self._job_path(submission_id) + "/logs"
        answer = self._http.request("GET", path, job=submission_id)
        try:
            return LogsAnswer.model_validate(answer).logs
        except ValidationError:
            raise RayJobsApiError(
                200, f"logs answer has no 'logs' text: {answer!r:.200}", method="GET", path=path
            ) from None

    def follow_logs(
        self, submission_id: str, *, poll: float = 1.0, timeout: float | None = None
    ) -> Iterator[str]:
        """Yield the job's output as it is written, until the job reaches a terminal status.

        Each chunk is whole lines (a trailing partial line waits for its newline, or for the
        job's end). Polls every `poll` seconds; with `timeout`, raises `RayJobTimeout` if the
        job is still running after that many seconds. If the log is ever replaced by a shorter
        one, the new log is yielded from its start. Arguments are checked when called; the
        first request is sent when iteration starts.
        """
        _check_seconds(poll, "poll", allow_none=False)
        _check_seconds(timeout, "timeout", allow_none=True)
        check_submission_id(submission_id)
        return self._follow(submission_id, poll, timeout)

    def _follow(self, submission_id: str, poll: float, timeout: float | None) -> Iterator[str]:
        deadline = None if timeout is None else time.monotonic() + timeout
        shown = ""  # the part of the log already yielded
        while True:
            # Status first: if it is terminal, the log read after it is complete.
            details = self.get(submission_id)
            text = self.logs(submission_id)
            if not text.startswith(shown):
                shown = ""
            end = len(text) if details.is_terminal else text.rfind("\n", len(shown)) + 1
            if end > len(shown):
                yield text[len(shown) : end]
                shown = text[:end]
            if details.is_terminal:
                return
            if timeout is not None and deadline is not None and time.monotonic() >= deadline:
                raise RayJobTimeout(submission_id, timeout, details.status.value)
            time.sleep(poll)

    def wait(self, submission_id: str, *, timeout: float = 600.0, poll: float = 0.5) -> JobDetails:
        """Poll until the job is SUCCEEDED, FAILED or STOPPED, and return its final details.

        The interval starts at `poll` seconds and grows by half each round up to 10s, so short
        jobs are seen finishing quickly and long ones do not load the dashboard. Raises
        `RayJobTimeout` (naming the last status seen) if the job is not done after `timeout`
        seconds; the job itself keeps running.
        """
        _check_seconds(timeout, "timeout", allow_none=False)
        _check_seconds(poll, "poll", allow_none=False)
        check_submission_id(submission_id)
        deadline = time.monotonic() + timeout
        interval = poll
        while True:
            details = self.get(submission_id)
            if details.is_terminal:
                return details
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RayJobTimeout(submission_id, timeout, details.status.value)
            time.sleep(min(interval, remaining))
            interval = min(interval * 1.5, max(poll, _MAX_POLL))

    def stop(self, submission_id: str) -> bool:
        """Ask Ray to stop the job. False if it had already finished; poll `wait` to see it
        reach STOPPED."""
        path = self._job_path(submission_id) + "/stop"
        answer = self._http.request("POST", path, job=submission_id)
        return _flag(answer, "stopped", "POST", path)

    def delete(self, submission_id: str) -> bool:
        """Delete a finished job's record and logs.

        Ray refuses (`RayJobsApiError`) while the job is still PENDING or RUNNING: `stop` and
        `wait` first. Ray's job monitor can re-create the record of a job deleted within a
        second or so of finishing, as FAILED ("Job supervisor actor died"); delete jobs that
        finished a few seconds ago, or check with `get` and delete again.
        """
        path = self._job_path(submission_id)
        answer = self._http.request("DELETE", path, job=submission_id)
        return _flag(answer, "deleted", "DELETE", path)

    def list_jobs(self) -> list[JobDetails]:
        """All jobs the cluster knows: submitted jobs and plain driver jobs."""
        path = "/api/jobs/"
        answer = self._http.request("GET", path)
        if isinstance(answer, dict):
            # Ray before 2.0 answered with a map of submission id to job.
            answer = [{"submission_id": key, **value} for key, value in answer.items()]
        if not isinstance(answer, list):
            raise RayJobsApiError(
                200, f"expected a list of jobs, got {answer!r:.200}", method="GET", path=path
            )
        return [_parse(JobDetails, item, "GET", path) for item in answer]

    def _job_path(self, submission_id: str) -> str:
        return f"/api/jobs/{check_submission_id(submission_id)}"


def _parse(model: type[_Model], answer: JsonValue, method: str, path: str) -> _Model:
    try:
        return model.model_validate(answer)
    except ValidationError as exc:
        raise RayJobsApiError(
            200,
            f"unexpected answer shape for {model.__name__}: {exc.errors()[0]['msg']} "
            f"at {'.'.join(str(p) for p in exc.errors()[0]['loc']) or '<root>'}",
            method=method,
            path=path,
            body=repr(answer)[:2000],
        ) from None


def _flag(answer: JsonValue, key: str, method: str, path: str) -> bool:
    if isinstance(answer, dict) and isinstance(answer.get(key), bool):
        return bool(answer[key])
    raise RayJobsApiError(
        200, f"expected {{{key!r}: bool}}, got {answer!r:.200}", method=method, path=path
    )


def _check_seconds(value: object, field: str, *, allow_none: bool) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        accepted = "a number of seconds > 0" + (" or None" if allow_none else "")
        raise RayJobValidationError(field, f"must be {accepted}, got {value!r}")
